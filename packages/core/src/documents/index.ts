// Folder-name rules are pure, so browser clients (the desktop renderer) may check names offline too.
export { folderNameKey, folderNameProblem, MAX_FOLDER_NAME_LENGTH } from "../folder-names";
export * from "./names";
export * from "./todos";
export * from "./workspace";
