// Conversions between the server form's text areas and ServerConfig fields.

/** Parses KEY=VALUE (env) or "Key: Value" (headers) lines; returns errors by line. */
export function parsePairs(text: string, sep: '=' | ':'): { value: Record<string, string>; error?: string } {
  const value: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line || line.startsWith('#')) continue;
    const at = line.indexOf(sep);
    if (at <= 0) return { value, error: `Line ${i + 1}: expected ${sep === '=' ? 'KEY=VALUE' : 'Name: value'}` };
    value[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return { value };
}

export function formatPairs(rec: Record<string, string> | undefined, sep: '=' | ':'): string {
  return Object.entries(rec ?? {})
    .map(([k, v]) => (sep === '=' ? `${k}=${v}` : `${k}: ${v}`))
    .join('\n');
}

export function parseLines(text: string): string[] {
  return text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
}
