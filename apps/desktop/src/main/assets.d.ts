// electron-vite resolves `import file from "…?asset"` to the file's path in the build output.
/// <reference types="electron-vite/node" />
