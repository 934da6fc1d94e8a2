export const MAX_USERNAME_LENGTH = 64;

/**
 * Usernames are lowercase handles. `<username>_coo` addresses a user's agent and
 * `group:<id>` a group, so neither form may be a username.
 */
export function usernameProblem(username: string): string | null {
  if (username.length === 0) return "must not be empty";
  if (username.length > MAX_USERNAME_LENGTH) return `must be at most ${MAX_USERNAME_LENGTH} characters`;
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(username)) {
    return "must be lowercase letters, digits, '.', '_' or '-', starting with a letter or digit";
  }
  if (username.endsWith("_coo")) return "must not end in '_coo' (that suffix addresses a user's agent)";
  return null;
}
