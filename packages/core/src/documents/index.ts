export * from "./names";
export * from "./todos";
export * from "./workspace";
