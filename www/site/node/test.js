// `node:test` for the site's examples: `test` (and `it`, `describe`, `before`, `after`, `beforeEach`, `afterEach`)
// collect the tests while the example's module runs; the runner then runs them in order (`runTests`) and prints each
// result as Node's reporter does, then the counts. A test's context has `after`, `diagnostic`, `signal`, `name`.

let queue = [];
let hooks = { before: [], after: [], beforeEach: [], afterEach: [] };
let prefix = [];

export function test(name, options, fn) {
  if (typeof name === "function") [name, options, fn] = [name.name || "<anonymous>", {}, name];
  if (typeof options === "function") [options, fn] = [{}, options];
  queue.push({ name: [...prefix, name].join(" > "), fn, skip: options?.skip, todo: options?.todo });
}
test.skip = (name, fn) => test(name, { skip: true }, fn);
test.todo = (name, fn) => test(name, { todo: true }, fn);
export const it = test;

export function describe(name, fn) {
  prefix.push(name);
  try {
    fn();
  } finally {
    prefix.pop();
  }
}
export const suite = describe;

export const before = (fn) => hooks.before.push(fn);
export const after = (fn) => hooks.after.push(fn);
export const beforeEach = (fn) => hooks.beforeEach.push(fn);
export const afterEach = (fn) => hooks.afterEach.push(fn);

const describeError = (e) => {
  if (!(e instanceof Error)) return String(e);
  const code = e.code ? ` (code ${e.code})` : "";
  return `${e.name}: ${e.message}${code}`;
};

/** Runs and forgets the tests collected since the last call; `print(line)` gets the report. `{ passed, failed }`. */
export async function runTests(print) {
  const tests = queue;
  const h = hooks;
  queue = [];
  hooks = { before: [], after: [], beforeEach: [], afterEach: [] };
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const safely = async (fn, what) => {
    try {
      await fn();
      return true;
    } catch (e) {
      failed++;
      print(`✖ ${what} failed: ${describeError(e)}`);
      return false;
    }
  };
  let ready = true;
  for (const fn of h.before) ready = ready && (await safely(fn, "before"));
  for (const t of tests) {
    if (t.skip || t.todo) {
      skipped++;
      print(`﹣ ${t.name} # ${t.skip ? "SKIP" : "TODO"}`);
      continue;
    }
    if (!ready) {
      failed++;
      print(`✖ ${t.name}: not run, a before hook failed`);
      continue;
    }
    const cleanups = [];
    const controller = new AbortController();
    const context = {
      name: t.name,
      signal: controller.signal,
      after: (fn) => cleanups.push(fn),
      diagnostic: (message) => print(`ℹ ${message}`),
      skip: () => {},
      todo: () => {},
      mock: undefined,
    };
    const started = performance.now();
    let error = null;
    try {
      for (const fn of h.beforeEach) await fn(context);
      await t.fn(context);
      for (const fn of h.afterEach) await fn(context);
    } catch (e) {
      error = e;
    }
    controller.abort();
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (e) {
        error ??= e;
      }
    }
    const ms = (performance.now() - started).toFixed(0);
    if (error) {
      failed++;
      print(`✖ ${t.name} (${ms} ms)\n  ${describeError(error).replace(/\n/g, "\n  ")}`);
    } else {
      passed++;
      print(`✔ ${t.name} (${ms} ms)`);
    }
  }
  for (const fn of h.after) await safely(fn, "after");
  print(`ℹ tests ${tests.length}, pass ${passed}, fail ${failed}${skipped ? `, skipped ${skipped}` : ""}`);
  return { passed, failed };
}

export default test;
