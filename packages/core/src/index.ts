export * from "./api";
export * from "./client";
export * from "./documents";
export * from "./folder-names";
export * from "./openapi";
export * from "./scopes";
export * from "./usernames";
