/** The longest title of a note, a todo or a step, in characters: the API's limit, checked by the apps too. */
export const MAX_TITLE_LENGTH = 500;

/** Why `title` is too long, or null; an over-long title is refused with this message, never cut. */
export function titleLengthProblem(title: string): string | null {
  const length = title.trim().length;
  return length > MAX_TITLE_LENGTH ? `A title has at most ${MAX_TITLE_LENGTH} characters (this one has ${length}).` : null;
}
