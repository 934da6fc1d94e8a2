/**
 * Rules for folder names and nested folder paths, shared by the server's validation and any
 * client that wants to check a name before sending it.
 */
export const MAX_FOLDER_NAME_LENGTH = 255;
export const MAX_FOLDER_DEPTH = 64;

// Control characters would corrupt listings and paths; `/` separates path segments.
const FORBIDDEN = /[\u0000-\u001f\u007f/]/;

/** Returns why `name` is not a valid folder name, or null when it is. */
export function folderNameProblem(name: string): string | null {
  const trimmed = name.trim();
  if (trimmed.length === 0) return "must not be empty";
  if (trimmed.length > MAX_FOLDER_NAME_LENGTH) return `must be at most ${MAX_FOLDER_NAME_LENGTH} characters`;
  if (FORBIDDEN.test(trimmed)) return "must not contain '/' or control characters";
  if (trimmed === "." || trimmed === "..") return "must not be '.' or '..'";
  return null;
}

/**
 * Splits `a/b/c` into trimmed segments. Leading and trailing slashes are tolerated; an empty
 * segment in the middle (`a//b`) is an error, as is any invalid segment.
 */
export function splitFolderPath(path: string): { segments: string[] } | { problem: string } {
  const segments = path
    .replace(/^\/+|\/+$/g, "")
    .split("/")
    .map((segment) => segment.trim());
  if (segments.length === 1 && segments[0] === "") return { problem: "must name at least one folder" };
  if (segments.length > MAX_FOLDER_DEPTH) return { problem: `must be at most ${MAX_FOLDER_DEPTH} folders deep` };
  for (const [index, segment] of segments.entries()) {
    const problem = folderNameProblem(segment);
    if (problem) return { problem: `segment ${index + 1} ("${segment}") ${problem}` };
  }
  return { segments };
}

/**
 * The key two sibling folders must not share: names are unique per parent regardless of case
 * and Unicode normalisation, computed here so SQLite and PostgreSQL agree.
 */
export function folderNameKey(name: string): string {
  return name.trim().normalize("NFC").toLowerCase();
}
