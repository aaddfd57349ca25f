/** The 256 two-digit lower-case hex spellings of a byte, built once. */
const BYTE_HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/**
 * The lower-case hex spelling of some bytes (a digest). One table lookup and one string append per byte: on the
 * admitted path this runs for every request, and the spread-map-padStart-join spelling cost several times more.
 *
 * @example
 * ```ts
 * bytesToHex(new Uint8Array([0, 15, 255])); // "000fff"
 * ```
 */
export function bytesToHex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let hex = "";
  for (let i = 0; i < view.length; i++) hex += BYTE_HEX[view[i] as number];
  return hex;
}
