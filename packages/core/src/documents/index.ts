// Folder-name rules are pure, so browser clients (the desktop renderer) may check names offline too.

export { dueDateProblem, EARLIEST_DUE_DATE, LATEST_DUE_DATE } from "../dates";
export { folderNameKey, folderNameProblem, MAX_FOLDER_NAME_LENGTH } from "../folder-names";
export * from "./limits";
export * from "./names";
export * from "./todos";
export * from "./workspace";
