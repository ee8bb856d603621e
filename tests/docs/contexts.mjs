// Where each block is type-checked, and the contexts a fragment is checked inside.
//
// An environment is a TypeScript project: its globals (`@types/node`, `@cloudflare/workers-types`, `@types/bun`,
// the DOM) and its module resolution (the package's `exports` conditions the runtime takes). Deno blocks are
// checked by `deno check`, with Deno's own types.

/** The environment a block of each run kind is checked in. */
export const ENV_OF_KIND = {
  node: "node",
  "node-test": "node",
  "node-server": "node",
  "route-handler": "node",
  edge: "node",
  cjs: "node",
  worker: "worker",
  deno: "deno",
  "deno-server": "deno",
  bun: "bun",
  "bun-server": "bun",
  page: "web",
};

/** tsconfig.json's `compilerOptions` of each environment checked by tsc; `--strict` in every one. */
export const TSCONFIG = {
  node: {
    target: "es2022",
    module: "nodenext",
    moduleResolution: "nodenext",
    lib: ["es2023", "esnext.disposable", "dom", "dom.iterable"],
    types: ["node"],
  },
  worker: {
    target: "es2022",
    module: "esnext",
    moduleResolution: "bundler",
    customConditions: ["workerd"],
    lib: ["es2023"],
    types: ["@cloudflare/workers-types"],
  },
  bun: {
    target: "es2022",
    module: "esnext",
    moduleResolution: "bundler",
    customConditions: ["bun"],
    lib: ["es2023", "dom", "dom.iterable"],
    types: ["bun"],
  },
  web: {
    target: "es2022",
    module: "esnext",
    moduleResolution: "bundler",
    customConditions: ["browser"],
    lib: ["es2023", "esnext.disposable", "dom", "dom.iterable"],
    types: [],
  },
};

/**
 * Fragment contexts: the environment and the declarations a fragment may use without declaring them. Written as
 * `declare` lines with type imports only, so the fragment may import what it shows without a clash.
 */
export const CONTEXTS = {
  /** A whole module on its own (imports included), checked but not run: a type, a store, a config. */
  module: { env: "node", prelude: "" },
  /** A page's module. */
  page: { env: "web", prelude: "" },
  /** A Worker's module. */
  worker: { env: "worker", prelude: "" },
  /** A client made as the quick start makes it. */
  client: { env: "node", prelude: 'declare const client: import("docauto").DocAuto;' },
  /** A verifier, and the request a route received. */
  verifier: {
    env: "node",
    prelude: [
      'declare const verifier: import("docauto/webhooks").WebhookVerifier;',
      "declare const request: Request;",
      "declare const rawBody: Uint8Array;",
      "declare const signature: string;",
    ].join("\n"),
  },
  /** A transcriber in a page. */
  transcriber: { env: "web", prelude: 'declare const transcriber: import("docauto/realtime").RealtimeTranscriber;' },
  /** An in-process emulator in a test. */
  emulator: { env: "node", prelude: 'declare const emulator: import("docauto/emulator").InProcessEmulator;' },
};
