import picocolors from 'picocolors';

/** The colours a line may use: picocolors' formatters, each a no-op when colour is off. */
export type Colors = ReturnType<typeof picocolors.createColors>;

/**
 * Colour only on a terminal, and never when NO_COLOR is set to anything but
 * the empty string (https://no-color.org): a pipe, a file or a log collector
 * gets plain text, and so does anyone who asked for none.
 */
export function colorEnabled(stream: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === '');
}

/** Formatters that colour when `enabled`, else return their text unchanged. */
export function colors(enabled: boolean): Colors {
  return picocolors.createColors(enabled);
}
