// Secrets (agent tokens, passkeys) on screen: only their first characters,
// the same ones the Agents screen lists a stored token by, until the person
// asks to see the whole value. Copy always copies the real one.

/** How many characters of a secret are shown (authz's displayPrefix). */
export const SHOWN_CHARS = 10;

/** The secret as displayed: its start, then dots. */
export function mask(secret: string): string {
  if (secret.length <= SHOWN_CHARS) return secret;
  return secret.slice(0, SHOWN_CHARS) + '•'.repeat(Math.min(24, secret.length - SHOWN_CHARS));
}

/** text with every occurrence of secret masked (for snippets that contain it). */
export function maskIn(text: string, secret: string): string {
  return secret ? text.split(secret).join(mask(secret)) : text;
}
