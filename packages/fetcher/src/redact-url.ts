/** The URL with any `user:password@` replaced, for messages (URLs may carry credentials). */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z\d+.-]*:\/\/)[^/?#]*@/i, '$1***@');
}
