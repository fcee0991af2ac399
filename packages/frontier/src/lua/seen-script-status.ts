/** First element of every seen-set script reply; the Lua sources interpolate these values. */
export enum SeenScriptStatus {
  /** Success; the rest of the reply is the script's answer. */
  Ok = 1,
  /** The stored seen-set is in another mode (or an unknown layout); element 2 describes it. */
  ModeMismatch = 2,
}

/** What admitScript answers per candidate. */
export const ReserveCode = {
  OverGroupLimit: -2,
  OverPageLimit: -1,
  Duplicate: 0,
  Admitted: 1,
} as const;

/** One of the {@link ReserveCode} values. */
export type ReserveCode = (typeof ReserveCode)[keyof typeof ReserveCode];
