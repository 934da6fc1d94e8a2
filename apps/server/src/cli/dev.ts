// `npm run dev`: the server from its TypeScript sources under `tsx watch`, which restarts it on
// every save; no build involved (`npm start` and the CLI run the build in dist/ instead).
import { main } from "./main";

process.exitCode = await main(process.argv.slice(2));
