export * from "./names";
export * from "./workspace";
