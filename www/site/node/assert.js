// `node:assert/strict` for the site's examples: the assertions they use, with Node's strict meaning (`equal` is
// `Object.is`, `deepEqual` compares prototypes too), throwing an `AssertionError` that says what differed.

export class AssertionError extends Error {
  constructor({ message, actual, expected, operator }) {
    super(message);
    this.name = "AssertionError";
    this.code = "ERR_ASSERTION";
    this.actual = actual;
    this.expected = expected;
    this.operator = operator;
  }
}

const show = (v) => {
  try {
    if (typeof v === "string") return JSON.stringify(v);
    if (typeof v === "bigint") return `${v}n`;
    if (v instanceof Error) return `${v.name}: ${v.message}`;
    return JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x)) ?? String(v);
  } catch {
    return String(v);
  }
};

function fail(message, actual, expected, operator, text) {
  if (message instanceof Error) throw message;
  throw new AssertionError({ message: message ?? text, actual, expected, operator });
}

function isDeepEqual(a, b, seen = new Map()) {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (seen.get(a) === b) return true;
  seen.set(a, b);
  if (a instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof RegExp) return String(a) === String(b);
  if (ArrayBuffer.isView(a)) return a.byteLength === b.byteLength && a.every((x, i) => Object.is(x, b[i]));
  if (a instanceof Map) return a.size === b.size && [...a].every(([k, v]) => b.has(k) && isDeepEqual(v, b.get(k), seen));
  if (a instanceof Set) return a.size === b.size && [...a].every((v) => b.has(v));
  if (a instanceof Error && (a.message !== b.message || a.name !== b.name)) return false;
  const ka = Reflect.ownKeys(a).filter((k) => Object.prototype.propertyIsEnumerable.call(a, k));
  const kb = Reflect.ownKeys(b).filter((k) => Object.prototype.propertyIsEnumerable.call(b, k));
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && isDeepEqual(a[k], b[k], seen));
}

export function ok(value, message) {
  if (!value) fail(message, value, true, "==", `The expression evaluated to a falsy value: ${show(value)}`);
}

export function equal(actual, expected, message) {
  if (!Object.is(actual, expected)) fail(message, actual, expected, "strictEqual", `Expected values to be strictly equal:\n${show(actual)} !== ${show(expected)}`);
}

export function notEqual(actual, expected, message) {
  if (Object.is(actual, expected)) fail(message, actual, expected, "notStrictEqual", `Expected "actual" to be strictly unequal to: ${show(expected)}`);
}

export function deepEqual(actual, expected, message) {
  if (!isDeepEqual(actual, expected)) fail(message, actual, expected, "deepStrictEqual", `Expected values to be strictly deep-equal:\n${show(actual)}\nshould equal\n${show(expected)}`);
}

export function notDeepEqual(actual, expected, message) {
  if (isDeepEqual(actual, expected)) fail(message, actual, expected, "notDeepStrictEqual", `Expected "actual" not to be strictly deep-equal to: ${show(expected)}`);
}

export function match(string, regexp, message) {
  if (typeof string !== "string" || !regexp.test(string)) fail(message, string, regexp, "match", `The input did not match the regular expression ${regexp}. Input:\n${show(string)}`);
}

export function doesNotMatch(string, regexp, message) {
  if (typeof string === "string" && regexp.test(string)) fail(message, string, regexp, "doesNotMatch", `The input was expected to not match the regular expression ${regexp}. Input:\n${show(string)}`);
}

/** Node's check of a caught error against `expected`: a class, a validation function, a RegExp or an object. */
function checkError(error, expected, message, operator) {
  if (expected === undefined) return;
  if (typeof expected === "function") {
    if (expected.prototype !== undefined && error instanceof expected) return;
    if (Error.isPrototypeOf(expected) || expected === Error) {
      fail(message, error, expected, operator, `The error is expected to be an instance of "${expected.name}". Received: ${show(error)}`);
    }
    if (expected.call({}, error) !== true) fail(message, error, expected, operator, `The validation function is expected to return "true". Received ${show(error)}`);
    return;
  }
  if (expected instanceof RegExp) {
    if (!expected.test(String(error))) fail(message, error, expected, operator, `The input did not match the regular expression ${expected}. Input: ${show(String(error))}`);
    return;
  }
  for (const [k, v] of Object.entries(expected)) {
    const same = v instanceof RegExp && typeof error?.[k] === "string" ? v.test(error[k]) : isDeepEqual(error?.[k], v);
    if (!same) fail(message, error, expected, operator, `Expected values to be strictly deep-equal: error.${k} is ${show(error?.[k])}, not ${show(v)}`);
  }
}

export function throws(fn, expected, message) {
  if (typeof expected === "string") [message, expected] = [expected, undefined];
  try {
    fn();
  } catch (error) {
    checkError(error, expected, message, "throws");
    return;
  }
  fail(message, undefined, expected, "throws", "Missing expected exception.");
}

export function doesNotThrow(fn, message) {
  try {
    fn();
  } catch (error) {
    fail(message, error, undefined, "doesNotThrow", `Got unwanted exception.\nActual message: "${error?.message}"`);
  }
}

export async function rejects(promiseOrFn, expected, message) {
  if (typeof expected === "string") [message, expected] = [expected, undefined];
  try {
    await (typeof promiseOrFn === "function" ? promiseOrFn() : promiseOrFn);
  } catch (error) {
    checkError(error, expected, message, "rejects");
    return;
  }
  fail(message, undefined, expected, "rejects", "Missing expected rejection.");
}

export async function doesNotReject(promiseOrFn, message) {
  try {
    await (typeof promiseOrFn === "function" ? promiseOrFn() : promiseOrFn);
  } catch (error) {
    fail(message, error, undefined, "doesNotReject", `Got unwanted rejection.\nActual message: "${error?.message}"`);
  }
}

export function failure(message = "Failed") {
  fail(message, undefined, undefined, "fail", message);
}

export { failure as fail, equal as strictEqual, notEqual as notStrictEqual, deepEqual as deepStrictEqual, notDeepEqual as notDeepStrictEqual };

const assert = (value, message) => ok(value, message);
Object.assign(assert, {
  ok, equal, notEqual, deepEqual, notDeepEqual, match, doesNotMatch, throws, doesNotThrow, rejects, doesNotReject,
  fail: failure, strictEqual: equal, notStrictEqual: notEqual, deepStrictEqual: deepEqual, notDeepStrictEqual: notDeepEqual,
  AssertionError,
});
assert.strict = assert;
export default assert;
