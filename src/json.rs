//! The crate's JSON reader, for what the wasm modules read: the realtime service's messages and the transcriber's
//! options; a webhook token's header and claims, key sets and the verifier's options. It replaces `serde_json`'s
//! parser there: the parser, its error messages and the float printing they pull in cost about 40 KB of wasm in
//! `docauto/realtime`. Code that works on `serde_json::Value` gets one through [`parse_value_exact`], without that parser.
//!
//! It reads standard JSON (RFC 8259) into [`Json`] and refuses anything else (trailing text, a lone surrogate
//! escape, control characters in strings, nesting deeper than [`MAX_DEPTH`]). Numbers are `f64`, each the nearest
//! one to its text, as `JSON.parse` reads it (see `correctly_rounded`); a number beyond the `f64` range reads as an
//! infinity, as in `JSON.parse`, and the readers of a claim or a timestamp refuse it.

pub mod tape;

/// Deepest nesting of arrays and objects accepted (as `serde_json`'s default recursion limit).
pub const MAX_DEPTH: usize = 128;

/// A JSON value. Object members keep their order; [`Json::get`] finds the last member of a name, as
/// `JSON.parse` does.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(f64),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, members in order.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// Parses one JSON text (whitespace around it allowed); `None` when it is not valid JSON.
    pub fn parse(text: &str) -> Option<Json> {
        Reader::<Json>::new(text).document()
    }

    /// As [`Json::parse`], but a string holding a lone surrogate escape (`"\ud800"`, which `JSON.parse` accepts and a
    /// Rust `String` cannot hold) is read as `null`, and a member name holding one with U+FFFD in its place. For key
    /// sets: there such a string makes the one key that holds it unusable where it matters (`kid`, `x`, `alg`, ...),
    /// rather than the whole set unreadable.
    pub fn parse_lone_surrogates_as_null(text: &str) -> Option<Json> {
        let mut reader = Reader::<Json>::new(text);
        reader.lone_surrogates = true;
        reader.document()
    }

    /// The member `name` of an object (the last one when repeated); `None` for a missing name or a non-object.
    pub fn get(&self, name: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members
                .iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// The number, if this is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The items, if this is an array.
    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The members in order, if this is an object.
    pub fn as_object(&self) -> Option<&[(String, Json)]> {
        match self {
            Json::Object(members) => Some(members),
            _ => None,
        }
    }

    /// A whole number from 0 to `max` (written `7`, `7.0` or `7e0`); `None` otherwise.
    pub fn as_whole(&self, max: u64) -> Option<u64> {
        // `max as f64` rounds up for u64::MAX; the comparison stays correct for the maxima used (u32, 2^53).
        crate::options::whole_number(self.as_f64()?, 0.0, max as f64)
    }
}

/// The members `names` of the JSON object in `bytes` (`None` for each absent one); `None` when it is not JSON, not
/// an object, or names one of `names` twice (a last-wins reader and a first-wins reader would disagree on it: a
/// token's header naming `alg` twice is refused, not read either way).
pub fn members<const N: usize>(bytes: &[u8], names: &[&str; N]) -> Option<[Option<Json>; N]> {
    let mut found: [Option<Json>; N] = core::array::from_fn(|_| None);
    fill_members(bytes, names, &mut found).then_some(found)
}

/// [`members`]' work, for any count of names: one function, not inlined, rather than one per array size with the
/// names compared inline (its callers are on a cold start's first verification, where V8 compiles each function
/// whole the first time it runs).
#[inline(never)]
fn fill_members(bytes: &[u8], names: &[&str], found: &mut [Option<Json>]) -> bool {
    let Some(Json::Object(object)) = core::str::from_utf8(bytes).ok().and_then(Json::parse) else {
        return false;
    };
    for (name, value) in object {
        if let Some(slot) = names
            .iter()
            .position(|n| *n == name)
            .and_then(|i| found.get_mut(i))
        {
            if slot.replace(value).is_some() {
                return false;
            }
        }
    }
    true
}

/// [`Json::parse`] with the text of every number, in the order of the document (a body the client writes again
/// keeps the caller's own digits: see [`write_number`]). The numbers in the [`Json`] are read as [`Json::parse`]
/// reads them.
pub fn parse_with_number_texts(text: &str) -> Option<(Json, Vec<&str>)> {
    let mut reader = Reader::<Json>::new(text);
    reader.numbers = Some(Vec::new());
    let value = reader.document()?;
    let numbers = reader
        .numbers
        .unwrap_or_default()
        .iter()
        .map(|&(from, to)| text.get(from..to))
        .collect::<Option<_>>()?;
    Some((value, numbers))
}

/// A JSON text as a `serde_json::Value`, for what the API client reads (response bodies, the caller's params; a
/// repeated member name: the last one, as `serde_json` and `JSON.parse` do): every number is the nearest `f64`, as
/// `JSON.parse` reads it (as in [`Json::parse`]), then an integer when it is a whole number within 2^53, as
/// [`Json::into_value`] makes it; `None` when the text is not JSON or has a number beyond `f64`.
// One copy for its callers (the client's answers, params, the tape's members).
#[inline(never)]
pub fn parse_value_exact(text: &str) -> Option<serde_json::Value> {
    Reader::<serde_json::Value>::new(text).document()
}

/// `value` as compact JSON text, as `serde_json::to_string` writes it (object members in the map's order, the same
/// escapes), except for a number that is not a whole number within 2^53: see [`write_number`].
pub fn to_text(value: &serde_json::Value) -> String {
    let mut out = String::with_capacity(64);
    write_value(&mut out, value);
    out
}

/// Appends `value` as compact JSON text ([`to_text`]).
pub fn write_value(out: &mut String, value: &serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            for (i, (name, member)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, name);
                out.push(':');
                write_value(out, member);
            }
            out.push('}');
        }
    }
}

/// Appends a JSON string, escaped as `serde_json` escapes it: `"`, `\\` and control characters (`\n`, `\r`,
/// `\t`, `\b`, `\f`, else `\u00XX`); everything else as it is.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let mut plain = 0;
    for (at, b) in s.bytes().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            8 => "\\b",
            12 => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        // Up to an ASCII byte: whole characters.
        out.push_str(s.get(plain..at).unwrap_or_default());
        plain = at + 1;
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(char::from(
                HEX.get(usize::from(b >> 4)).copied().unwrap_or(b'0'),
            ));
            out.push(char::from(
                HEX.get(usize::from(b & 15)).copied().unwrap_or(b'0'),
            ));
        } else {
            out.push_str(escape);
        }
    }
    out.push_str(s.get(plain..).unwrap_or_default());
    out.push('"');
}

/// The length of a string as [`write_string`] writes it: quotes, and an escape for `"`, `\` and control characters
/// (two bytes for `\n`, `\r`, `\t`, `\b`, `\f`, six for the others).
pub fn written_len(s: &str) -> usize {
    2 + s.len()
        + s.bytes()
            .map(|b| match b {
                b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 8 | 12 => 1,
                0..=0x1f => 5,
                _ => 0,
            })
            .sum::<usize>()
}

/// Appends a number. Integers are written exactly, and so is an `f64` that is a whole number within 2^53 (`1.0`,
/// `-0.0`: as `serde_json` writes them). Any other `f64` is written as its shortest text that reads back as the
/// same `f64`: `Number.prototype.toString` in wasm (no float printer in the module: `1.5e+300`, `1e-7`), Rust's
/// `{:?}` elsewhere (`1.5e300`, `1e-7`). Text that keeps the caller's digits is the caller's own
/// ([`parse_with_number_texts`]), written by the caller of this function.
pub fn write_number(out: &mut String, n: &serde_json::Number) {
    if let Some(u) = n.as_u64() {
        write_whole(out, false, u);
    } else if let Some(i) = n.as_i64() {
        write_whole(out, i < 0, i.unsigned_abs());
    } else if let Some(f) = n.as_f64() {
        if f.fract() == 0.0 && f.abs() <= MAX_EXACT_INTEGER {
            write_whole(out, f.is_sign_negative(), f.abs() as u64);
            out.push_str(".0");
        } else {
            out.push_str(&shortest(f));
        }
    }
}

/// A whole number in decimal, without the formatting machinery.
fn write_whole(out: &mut String, negative: bool, mut n: u64) {
    let mut digits = [b'0'; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        if let Some(d) = digits.get_mut(at) {
            *d = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || at == 0 {
            break;
        }
    }
    if negative {
        out.push('-');
    }
    for &d in digits.get(at..).unwrap_or_default() {
        out.push(char::from(d));
    }
}

/// The shortest text of a finite `f64` that reads back as it: JavaScript's own (`String(n)`, one call to the host
/// instead of a float printer in the module).
#[cfg(target_arch = "wasm32")]
fn shortest(n: f64) -> String {
    js_sys::Number::from(n)
        .to_string_with_radix(10)
        .map_or_else(|_| "null".to_owned(), String::from)
}

/// The shortest text of a finite `f64` that reads back as it (Rust's `{:?}`: `0.1`, `1e-7`, `1.5e300`).
#[cfg(not(target_arch = "wasm32"))]
fn shortest(n: f64) -> String {
    format!("{n:?}")
}

impl Json {
    /// The value as `serde_json` reads it, but for numbers, read as `JSON.parse` reads them: a whole number within
    /// 2^53 is an integer however it is written (`1`, `1.0`, `1e0`), other numbers are the nearest `f64` (so is a
    /// whole number beyond 2^53, which `serde_json` keeps exact); `None` for a number beyond `f64` (which
    /// `serde_json` refuses as out of range).
    pub fn into_value(self) -> Option<serde_json::Value> {
        use serde_json::Value;
        Some(match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(b),
            Json::Number(n) => number_value(n)?,
            Json::String(s) => Value::String(s),
            Json::Array(items) => Value::Array(
                items
                    .into_iter()
                    .map(Json::into_value)
                    .collect::<Option<_>>()?,
            ),
            Json::Object(members) => {
                let mut map = serde_json::Map::new();
                for (name, value) in members {
                    map.insert(name, value.into_value()?);
                }
                Value::Object(map)
            }
        })
    }
}

/// A number as [`Json::into_value`] makes it (its own function: the `serde_json::Value` reader needs this part only).
fn number_value(n: f64) -> Option<serde_json::Value> {
    use serde_json::Value;
    // `-0` stays a float, as serde_json reads it.
    Some(
        if n.fract() == 0.0 && n.abs() <= MAX_EXACT_INTEGER && !(n == 0.0 && n.is_sign_negative()) {
            if n < 0.0 {
                Value::from(n as i64)
            } else {
                Value::from(n as u64)
            }
        } else {
            Value::Number(serde_json::Number::from_f64(n)?)
        },
    )
}

/// A `serde_json` value as a [`Json`] (for Rust callers and tests that build values with `json!`).
impl From<&serde_json::Value> for Json {
    fn from(value: &serde_json::Value) -> Self {
        use serde_json::Value;
        match value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            // `as_f64` is always `Some` without serde_json's `arbitrary_precision` (not enabled here).
            Value::Number(n) => Json::Number(n.as_f64().unwrap_or(f64::NAN)),
            Value::String(s) => Json::String(s.clone()),
            Value::Array(items) => Json::Array(items.iter().map(Json::from).collect()),
            Value::Object(members) => Json::Object(
                members
                    .iter()
                    .map(|(name, v)| (name.clone(), Json::from(v)))
                    .collect(),
            ),
        }
    }
}

/// 2^53: every whole number up to it is exact in an `f64`.
const MAX_EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

/// Exact powers of ten as `f64` (10^22 is the largest that is exact).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The nearest `f64` to the decimal number `text` (JSON's grammar, no sign), as `JSON.parse` reads it: in wasm by
/// the host's own number parser (`parseFloat`, the algorithm its `JSON.parse` uses; Rust's correctly rounded parser
/// would add 14 KB gzip of tables to each module); elsewhere by Rust's `str::parse::<f64>`, correctly rounded as
/// JavaScript engines read numbers. A number beyond the `f64` range is an infinity, as `JSON.parse` reads it.
#[cfg(target_arch = "wasm32")]
fn correctly_rounded(text: &str) -> Option<f64> {
    Some(js_sys::Number::parse_float(text)).filter(|n| !n.is_nan())
}

/// The nearest `f64` to the decimal number `text` (see the wasm version).
#[cfg(not(target_arch = "wasm32"))]
fn correctly_rounded(text: &str) -> Option<f64> {
    text.parse().ok()
}

/// What the reader builds: a [`Json`] (the reader of the webhook and realtime modules) or a `serde_json::Value`
/// (the client's, with exact numbers: a second copy of the reader, linked only where [`parse_value_exact`] is used).
trait Tree: Sized {
    /// An object's members while it is read.
    type Members;
    fn members() -> Self::Members;
    fn member(members: &mut Self::Members, name: String, value: Self);
    fn object(members: Self::Members) -> Self;
    fn array(items: Vec<Self>) -> Self;
    fn string(s: String) -> Self;
    fn number(n: f64) -> Option<Self>;
    fn boolean(b: bool) -> Self;
    fn null() -> Self;
}

impl Tree for Json {
    type Members = Vec<(String, Json)>;
    fn members() -> Self::Members {
        // Room for the members of a token's claims or a service message without growing.
        Vec::with_capacity(8)
    }
    fn member(members: &mut Self::Members, name: String, value: Self) {
        members.push((name, value));
    }
    fn object(members: Self::Members) -> Self {
        Json::Object(members)
    }
    fn array(items: Vec<Self>) -> Self {
        Json::Array(items)
    }
    fn string(s: String) -> Self {
        Json::String(s)
    }
    fn number(n: f64) -> Option<Self> {
        Some(Json::Number(n))
    }
    fn boolean(b: bool) -> Self {
        Json::Bool(b)
    }
    fn null() -> Self {
        Json::Null
    }
}

impl Tree for serde_json::Value {
    type Members = serde_json::Map<String, serde_json::Value>;
    fn members() -> Self::Members {
        serde_json::Map::new()
    }
    fn member(members: &mut Self::Members, name: String, value: Self) {
        // A name given twice: the last value, as serde_json and `JSON.parse` read it.
        members.insert(name, value);
    }
    fn object(members: Self::Members) -> Self {
        serde_json::Value::Object(members)
    }
    fn array(items: Vec<Self>) -> Self {
        serde_json::Value::Array(items)
    }
    fn string(s: String) -> Self {
        serde_json::Value::String(s)
    }
    fn number(n: f64) -> Option<Self> {
        number_value(n)
    }
    fn boolean(b: bool) -> Self {
        serde_json::Value::Bool(b)
    }
    fn null() -> Self {
        serde_json::Value::Null
    }
}

/// How many bytes of `bytes` come before the first `"`, `\\` or control character (`None` when there is none): eight
/// bytes at a time (a string's text is most of a schema's), the first such byte of the eight that hold one found from
/// the word's flags; the last few bytes one by one.
fn plain_run(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // The high bit of each byte of `v` that is zero, or below 0x20. A borrow can also flag a byte above a flagged
    // one, never below: the lowest flag is exact.
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let below_space = |v: u64| v.wrapping_sub(ONES * 0x20) & !v & HIGH;
    let mut at = 0;
    for chunk in bytes.chunks_exact(8) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let v = u64::from_le_bytes(word);
        let flags = zero(v ^ (ONES * u64::from(b'"')))
            | zero(v ^ (ONES * u64::from(b'\\')))
            | below_space(v);
        if flags != 0 {
            return Some(at + (flags.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let rest = bytes.get(at..)?;
    rest.iter()
        .position(|b| matches!(b, b'"' | b'\\' | 0..=0x1f))
        .map(|run| at + run)
}

/// Where [`Reader::string_into`] puts a string's characters: a `String`, or nowhere (`()`: the string is checked,
/// not kept; a third faster than keeping it).
trait Chars {
    fn push_str(&mut self, s: &str);
    fn push(&mut self, c: char);
}

impl Chars for String {
    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }
    fn push(&mut self, c: char) {
        String::push(self, c);
    }
}

impl Chars for () {
    fn push_str(&mut self, _: &str) {}
    fn push(&mut self, _: char) {}
}

struct Reader<'a, T> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    /// When asked for, where each number's text starts and ends, in the order of the document.
    numbers: Option<Vec<(usize, usize)>>,
    /// Whether a string holding a lone surrogate escape is read (as `null`; see [`Json::parse_lone_surrogates_as_null`])
    /// rather than refused.
    lone_surrogates: bool,
    /// Whether the string just read held a lone surrogate (then U+FFFD stands in its place).
    lone: bool,
    /// Whether whitespace was skipped anywhere (the text is not its own compact form).
    spaced: bool,
    of: core::marker::PhantomData<fn() -> T>,
}

impl<'a, T> Reader<'a, T> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            bytes: text.as_bytes(),
            at: 0,
            numbers: None,
            lone_surrogates: false,
            lone: false,
            spaced: false,
            of: core::marker::PhantomData,
        }
    }

    /// One JSON text, whitespace around it allowed.
    fn document(&mut self) -> Option<T>
    where
        T: Tree,
    {
        let value = self.value(0)?;
        self.skip_space();
        (self.at == self.bytes.len()).then_some(value)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
            self.spaced = true;
        }
    }

    fn expect(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at.checked_add(word.len())?;
        (self.bytes.get(self.at..end)? == word).then(|| self.at = end)
    }

    fn value(&mut self, depth: usize) -> Option<T>
    where
        T: Tree,
    {
        self.skip_space();
        match self.peek()? {
            b'n' => self.expect(b"null").map(|()| T::null()),
            b't' => self.expect(b"true").map(|()| T::boolean(true)),
            b'f' => self.expect(b"false").map(|()| T::boolean(false)),
            b'"' => {
                let s = self.string()?;
                // A string that held a lone surrogate (lenient reading only) is `null`: nothing can use it as text.
                Some(if self.lone { T::null() } else { T::string(s) })
            }
            b'[' if depth < MAX_DEPTH => self.array(depth + 1),
            b'{' if depth < MAX_DEPTH => self.object(depth + 1),
            b'-' | b'0'..=b'9' => self.number().and_then(T::number),
            _ => None,
        }
    }

    fn array(&mut self, depth: usize) -> Option<T>
    where
        T: Tree,
    {
        self.at += 1;
        let mut items = Vec::new();
        self.skip_space();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(T::array(items));
        }
        loop {
            items.push(self.value(depth)?);
            self.skip_space();
            match self.next()? {
                b',' => {}
                b']' => return Some(T::array(items)),
                _ => return None,
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<T>
    where
        T: Tree,
    {
        self.at += 1;
        let mut members = T::members();
        self.skip_space();
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(T::object(members));
        }
        loop {
            self.skip_space();
            if self.peek()? != b'"' {
                return None;
            }
            let name = self.string()?;
            self.skip_space();
            if self.next()? != b':' {
                return None;
            }
            let value = self.value(depth)?;
            T::member(&mut members, name, value);
            self.skip_space();
            match self.next()? {
                b',' => {}
                b'}' => return Some(T::object(members)),
                _ => return None,
            }
        }
    }

    /// A string, the reader on its opening quote. With `lone_surrogates`, a lone surrogate escape becomes U+FFFD and
    /// sets `lone`; else it is refused.
    fn string(&mut self) -> Option<String> {
        let mut out = String::new();
        self.string_into(&mut out)?;
        Some(out)
    }

    /// [`Reader::string`] into `out` (a `String`, or `()` to check the string only); returns whether it held an
    /// escape (then its text is not its value).
    fn string_into(&mut self, out: &mut impl Chars) -> Option<bool> {
        self.at += 1;
        self.lone = false;
        let mut escaped = false;
        loop {
            let start = self.at;
            let run = plain_run(self.bytes.get(start..)?)?;
            self.at += run;
            // The text is a `str` and the run ends at an ASCII byte: the slice is whole characters, no check needed.
            out.push_str(self.text.get(start..self.at)?);
            match self.next()? {
                b'"' => return Some(escaped),
                b'\\' => {
                    escaped = true;
                    let c = match self.next()? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return None,
                    };
                    out.push(c);
                }
                _ => return None, // a control character
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let mut n = 0;
        for _ in 0..4 {
            n = n * 16 + char::from(self.next()?).to_digit(16)?;
        }
        Some(n)
    }

    /// The character of `\uXXXX` (after the `u`), a surrogate pair read as one character. A lone surrogate (a high
    /// one not followed by a low one's escape, or a low one alone) is refused, or with `lone_surrogates` read as
    /// U+FFFD (and what follows it read on its own).
    fn unicode_escape(&mut self) -> Option<char> {
        let first = self.hex4()?;
        if (0xD800..0xDC00).contains(&first) {
            let after_first = self.at;
            let second = self.expect(b"\\u").and_then(|()| self.hex4());
            if let Some(second @ 0xDC00..0xE000) = second {
                return char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00));
            }
            self.at = after_first;
        }
        match char::from_u32(first) {
            Some(c) => Some(c),
            None if self.lone_surrogates => {
                self.lone = true;
                Some(char::REPLACEMENT_CHARACTER)
            }
            None => None,
        }
    }

    /// Digits from the reader, accumulated into `mantissa` (at most 19 significant digits); returns how many
    /// digits were read and how many were dropped.
    fn digits(&mut self, mantissa: &mut u64) -> (usize, i32) {
        let (mut read, mut dropped) = (0, 0_i32);
        while let Some(d @ b'0'..=b'9') = self.peek() {
            self.at += 1;
            read += 1;
            match mantissa
                .checked_mul(10)
                .and_then(|m| m.checked_add(u64::from(d - b'0')))
            {
                Some(m) => *mantissa = m,
                None => dropped = dropped.saturating_add(1),
            }
        }
        (read, dropped)
    }

    fn number(&mut self) -> Option<f64> {
        let start = self.at;
        let negative = self.peek()? == b'-';
        if negative {
            self.at += 1;
        }
        let mut mantissa = 0_u64;
        let leading_zero = self.peek()? == b'0';
        let (int_digits, int_dropped) = self.digits(&mut mantissa);
        if int_digits == 0 || (leading_zero && int_digits > 1) {
            return None;
        }
        let mut exponent = int_dropped;
        if self.peek() == Some(b'.') {
            self.at += 1;
            let (frac_digits, frac_dropped) = self.digits(&mut mantissa);
            if frac_digits == 0 {
                return None;
            }
            let kept = i32::try_from(frac_digits).unwrap_or(i32::MAX) - frac_dropped;
            exponent = exponent.saturating_sub(kept);
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            let sign = match self.peek()? {
                b'-' => {
                    self.at += 1;
                    -1
                }
                b'+' => {
                    self.at += 1;
                    1
                }
                _ => 1,
            };
            let mut e = 0_u64;
            let (read, _) = self.digits(&mut e);
            if read == 0 {
                return None;
            }
            let e = i32::try_from(e.min(100_000)).unwrap_or(100_000);
            exponent = exponent.saturating_add(sign * e);
        }
        // A mantissa below 2^53 and a power of ten within 10^22 are exact in an `f64`, so `m * 10^e` (or `m / 10^-e`)
        // is one correctly rounded operation. Beyond that, the correctly rounded reading of the text itself (as
        // `JSON.parse` reads it): a number is ASCII, so the slice is whole characters.
        let pow10 = POW10
            .get(exponent.unsigned_abs() as usize)
            .filter(|_| mantissa < (1 << 53));
        let n = match pow10 {
            Some(p) if exponent < 0 => mantissa as f64 / p,
            Some(p) => mantissa as f64 * p,
            None => correctly_rounded(self.text.get(start + usize::from(negative)..self.at)?)?,
        };
        if let Some(numbers) = &mut self.numbers {
            numbers.push((start, self.at));
        }
        Some(if negative { -n } else { n })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Json {
        Json::parse(text).unwrap_or_else(|| panic!("did not parse: {text}"))
    }

    #[test]
    fn a_plain_run_ends_where_a_byte_by_byte_scan_ends() {
        let naive = |bytes: &[u8]| {
            bytes
                .iter()
                .position(|b| matches!(b, b'"' | b'\\' | 0..=0x1f))
        };
        let fillers = [b'a', b' ', 0x21, 0x5b, 0x5d, 0x7f, 0x80, 0xc3, 0xff];
        for len in 0..24 {
            for filler in fillers {
                let plain = vec![filler; len];
                assert_eq!(plain_run(&plain), naive(&plain), "{len} {filler}");
                for at in 0..len {
                    for b in 0..=255_u8 {
                        let mut bytes = plain.clone();
                        bytes[at] = b;
                        // A second stop after the first: the first is found.
                        if at + 3 < len {
                            bytes[at + 3] = b'"';
                        }
                        assert_eq!(plain_run(&bytes), naive(&bytes), "{bytes:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn reads_every_kind_of_value_and_keeps_member_order() {
        let v = parse(
            r#" {"a": null, "b": true, "c": false, "d": -1.5e1, "e": "x", "f": [1, [], {}], "a": 2} "#,
        );
        let Json::Object(members) = &v else {
            panic!("not an object")
        };
        let names: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d", "e", "f", "a"]);
        assert_eq!(
            v.get("a"),
            Some(&Json::Number(2.0)),
            "the last member wins, as in JSON.parse"
        );
        assert_eq!(v.get("b").and_then(Json::as_bool), Some(true));
        assert_eq!(v.get("d").and_then(Json::as_f64), Some(-15.0));
        assert_eq!(v.get("e").and_then(Json::as_str), Some("x"));
        assert_eq!(
            v.get("f"),
            Some(&Json::Array(vec![
                Json::Number(1.0),
                Json::Array(vec![]),
                Json::Object(vec![])
            ]))
        );
        assert_eq!(v.get("zz"), None);
        assert_eq!(parse("[1]").get("a"), None);
    }

    #[test]
    fn numbers_read_as_the_nearest_f64() {
        // Checked against Rust's correctly rounded `str::parse::<f64>`, as `JSON.parse` reads them.
        for text in [
            "0",
            "-0",
            "7",
            "2.04",
            "0.1",
            "1.5",
            "3.25",
            "16000",
            "48000.0",
            "1e3",
            "1E+3",
            "25e-1",
            "0.000001",
            "123456789012345",
            "9007199254740991",
            "5e-324",
            "-2.5e-3",
            "1e-22",
            "4.5e22",
            "0e999",
            "0.30000000000000004",
            "1.7976931348623157e307",
            "1e308",
            "123456789012345678901234567890",
            "3.14159265358979323846264338327950288",
            "1e-310",
        ]
        .into_iter()
        .chain(HARD_NUMBERS)
        {
            let want: f64 = text.parse().unwrap();
            let got = parse(text).as_f64().unwrap();
            assert_eq!(got.to_bits(), want.to_bits(), "{text}: {got:e} != {want:e}");
        }
    }

    #[test]
    fn the_largest_double_is_read_as_itself_and_beyond_it_is_infinity() {
        // A token with `exp: 1.7976931348623157e308` (f64::MAX) must not read it as Infinity.
        assert_eq!(parse("1.7976931348623157e308").as_f64(), Some(f64::MAX));
        assert_eq!(parse("-1.7976931348623157e308").as_f64(), Some(f64::MIN));
        // Beyond the range, an infinity, as `JSON.parse` reads it; its readers refuse it where it matters.
        assert_eq!(parse("1e400").as_f64(), Some(f64::INFINITY));
        assert_eq!(parse("-1e400").as_f64(), Some(f64::NEG_INFINITY));
        assert_eq!(
            parse("1.7976931348623159e308").as_f64(),
            Some(f64::INFINITY)
        );
    }

    #[test]
    fn every_generated_number_reads_as_the_correctly_rounded_parser_reads_it() {
        // 543 of 2 925 fuzzed numbers differed from `JSON.parse` by up to 6 ulp before the reader was made exact.
        let texts = number_texts(40_000);
        for text in &texts {
            let want: f64 = text.parse().unwrap();
            let got = parse(text).as_f64().unwrap();
            assert_eq!(got.to_bits(), want.to_bits(), "{text}: {got:e} != {want:e}");
            let exact = parse_value_exact(text).and_then(|v| v.as_f64());
            assert!(
                exact.map(f64::to_bits) == Some(want.to_bits()) || !want.is_finite(),
                "{text}: {exact:?} != {want:e}"
            );
        }
    }

    #[test]
    fn strings_decode_every_escape() {
        assert_eq!(
            parse(r#""a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00 é""#),
            Json::String("a\"b\\c/d\u{8}\u{c}\n\r\t\u{e9}\u{1F600} é".into())
        );
    }

    #[test]
    fn whole_numbers_are_checked_against_their_bounds() {
        assert_eq!(parse("7").as_whole(10), Some(7));
        assert_eq!(parse("7.0").as_whole(10), Some(7));
        assert_eq!(parse("11").as_whole(10), None);
        assert_eq!(parse("-1").as_whole(10), None);
        assert_eq!(parse("1.5").as_whole(10), None);
        assert_eq!(parse("\"7\"").as_whole(10), None);
    }

    #[test]
    fn what_is_not_json_is_refused() {
        for text in [
            "",
            " ",
            "not json",
            "{",
            "}",
            "[1,]",
            "[1 2]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{a:1}",
            "{\"a\":1}x",
            "01",
            "-",
            "1.",
            ".5",
            "1e",
            "+1",
            "NaN",
            "Infinity",
            "tru",
            "nul",
            "'a'",
            "\"a",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\ud800\"",
            "\"\\ud800\\u0041\"",
            "\"\u{1}\"",
            "[1]]",
        ] {
            assert_eq!(Json::parse(text), None, "{text:?}");
        }
    }

    #[test]
    fn the_lenient_reader_reads_a_string_with_a_lone_surrogate_as_null() {
        let lenient = |t: &str| Json::parse_lone_surrogates_as_null(t);
        for text in [
            r#""\ud800""#,
            r#""a\udc00b""#,
            r#""\ud800\u0041""#,
            r#""\udbff\udbff""#,
            r#""\ud800\""#,
        ] {
            let strict = if text.ends_with("\\\"") {
                None
            } else {
                Some(Json::Null)
            };
            assert_eq!(lenient(text), strict, "{text}");
            assert_eq!(
                Json::parse(text),
                None,
                "{text}: the strict reader refuses it"
            );
        }
        // A pair is one character in both readers; a name keeps U+FFFD in its place; other strings are untouched.
        assert_eq!(
            lenient(r#"["\ud83d\ude00", "x", {"\ud800a": "\ud800", "b": "c"}]"#),
            Some(Json::Array(vec![
                Json::String("\u{1F600}".into()),
                Json::String("x".into()),
                Json::Object(vec![
                    ("\u{FFFD}a".into(), Json::Null),
                    ("b".into(), Json::String("c".into()))
                ]),
            ]))
        );
        for text in ["[1,]", r#""\ud800\uZZZZ""#, "\"\\ud800"] {
            assert_eq!(lenient(text), None, "{text}");
        }
    }

    #[test]
    fn nesting_is_limited() {
        let deep = |n: usize| "[".repeat(n) + &"]".repeat(n);
        assert!(Json::parse(&deep(MAX_DEPTH)).is_some());
        assert_eq!(Json::parse(&deep(MAX_DEPTH + 1)), None);
        assert_eq!(Json::parse(&"[".repeat(100_000)), None);
    }

    const NAMES: [&str; 3] = ["a", "d", "z"];

    #[test]
    fn the_named_members_are_read_and_the_others_skipped() {
        let [a, d, z] = members(
            br#" {"a": 1, "b": {"c": [true, null, 1.5]}, "d": "e\u00e9"} "#,
            &NAMES,
        )
        .unwrap();
        assert_eq!(a, Some(Json::Number(1.0)));
        assert_eq!(d, Some(Json::String("e\u{e9}".to_owned())));
        assert_eq!(z, None);
    }

    #[test]
    fn a_named_member_given_twice_is_refused() {
        assert!(members(br#"{"a": 1, "a": 1}"#, &NAMES).is_none());
        // Escapes are decoded before names are compared.
        assert!(members(br#"{"a": 1, "\u0061": 2}"#, &NAMES).is_none());
        // A member this reader skips may repeat: it is never read, so no two readers can see it differently here.
        assert!(members(br#"{"b": 1, "b": 2}"#, &NAMES).is_some());
    }

    #[test]
    fn anything_but_one_object_is_refused() {
        for text in [
            "",
            "[]",
            "[1]",
            "1",
            "1.5",
            "-1",
            "true",
            "null",
            "\"a\"",
            "{",
            "{}{}",
            "{} x",
            "{\"a\"}",
            "{\"a\": }",
            "{1: 2}",
        ] {
            assert!(members(text.as_bytes(), &NAMES).is_none(), "{text:?}");
        }
        assert_eq!(members(b"{}", &NAMES), Some([None, None, None]));
    }

    /// A JSON text in `bytes` read by [`Json::parse`] and made a `serde_json::Value` by [`Json::into_value`]: the
    /// other reader, as an oracle of [`parse_value_exact`].
    fn parse_value(bytes: &[u8]) -> Option<serde_json::Value> {
        Json::parse(core::str::from_utf8(bytes).ok()?)?.into_value()
    }

    /// Documents both value readers are checked on (each test adds its own).
    const DOCUMENTS: [&str; 5] = [
        r#"{"a":[1,-2,2.5,-0.5,1e21,9007199254740992,"x\u00e9",null,true,false],"b":{"c":{}},"d":[]}"#,
        r#"{"a":1,"a":2}"#,
        "0",
        "-0",
        "[1e22, -1e-22, 0.1]",
    ];

    #[test]
    fn values_read_as_serde_json_reads_them() {
        for text in DOCUMENTS.into_iter().chain(["123456789"]) {
            let ours = parse_value(text.as_bytes());
            let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
            assert_eq!(ours.as_ref(), Some(&theirs), "{text}");
        }
        // A whole number is an integer however it is written, as JSON.parse makes no difference (the texts this reads
        // come from the service or from JSON.stringify, which writes `1`).
        assert_eq!(parse_value(b"1.0"), Some(serde_json::Value::from(1)));
        assert_eq!(parse_value(b"1e2"), Some(serde_json::Value::from(100)));
        // A whole number beyond 2^53 is read as the nearest f64, as JSON.parse reads it (serde_json keeps it exact).
        assert_eq!(
            parse_value(b"9007199254740993").and_then(|v| v.as_f64()),
            Some(9_007_199_254_740_992.0)
        );
        // serde_json refuses these as out of range; so does this reader's conversion.
        assert_eq!(parse_value(b"1e400"), None);
        assert_eq!(parse_value(b"[-1e999]"), None);
        assert_eq!(parse_value(b"\xff"), None);
    }

    /// Numbers where a reader exact only on a fast path (15 digits, exponents within ±22) can be off: the
    /// halfway and subnormal cases of "How to read floating point numbers accurately" (Clinger 1990) and the
    /// smallest normal number (2.2250738585072011e-308, the PHP/Java hang), with 0.1, 1e-7, 2^53 + 1,
    /// 1.5e300 and -0.
    const HARD_NUMBERS: [&str; 16] = [
        "0.1",
        "1e-7",
        "9007199254740993",
        "1.5e300",
        "-0.0",
        "-0",
        "1E+300",
        "0.30000000000000004",
        "2.2250738585072011e-308",
        "2.2250738585072012e-308",
        "4.9e-324",
        "1.7976931348623157e308",
        "123456789012345678901234567890",
        "3.14159265358979323846264338327950288",
        "9007199254740993.0000000000000001",
        "8.98846567431158e307",
    ];

    #[test]
    fn the_exact_reader_reads_every_number_as_json_parse_does() {
        for text in HARD_NUMBERS {
            let want: f64 = text.parse().unwrap();
            let got = parse_value_exact(text).unwrap().as_f64().unwrap();
            assert_eq!(got.to_bits(), want.to_bits(), "{text}: {got:e} != {want:e}");
        }
    }

    #[test]
    fn the_exact_reader_reads_values_as_into_value_makes_them() {
        for text in DOCUMENTS.into_iter().chain([
            "1.0",
            "1e2",
            r#"  {"z": {"y": [[], {}]}, "x": "\"\\\/\b\f\n\r\t\ud83d\ude00"}  "#,
        ]) {
            assert_eq!(
                parse_value_exact(text),
                parse_value(text.as_bytes()),
                "{text}"
            );
        }
        for text in [
            "",
            "01",
            "1.",
            "-",
            "[1,]",
            "{\"a\":1}x",
            "1e",
            "NaN",
            "\"\\ud800\"",
            "1e400",
            "[-1e999]",
        ] {
            assert_eq!(parse_value_exact(text), None, "{text:?}");
        }
    }

    #[test]
    fn number_texts_come_in_the_order_of_the_document() {
        for text in HARD_NUMBERS {
            assert_eq!(parse_with_number_texts(text).unwrap().1, [text]);
        }
        let text = r#" {"a": [1, -2.5e-3, {"b": 1.5e300}], "c": "9", "d": -0} "#;
        let (value, numbers) = parse_with_number_texts(text).unwrap();
        assert_eq!(numbers, ["1", "-2.5e-3", "1.5e300", "-0"]);
        assert_eq!(Some(value), Json::parse(text));
        assert!(parse_with_number_texts("[1,]").is_none());
    }

    /// `n` JSON number texts from a fixed seed, of every shape where a reader can be off: 1 to 40 significant
    /// digits, the decimal point anywhere, exponents from -360 to 360 (subnormals, overflow), and the texts of
    /// random doubles and of the midpoints next to them (where rounding is hardest). The same texts in every run.
    pub(super) fn number_texts(n: usize) -> Vec<String> {
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            // xorshift64*
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_F491_4F6C_DD1D)
        };
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let shape = next() % 4;
            let sign = if next() % 4 == 0 { "-" } else { "" };
            let text = if shape == 0 {
                // A random finite double's shortest text, or that text with more digits (a midpoint nearby).
                let d = f64::from_bits(next() >> 1);
                if !d.is_finite() {
                    continue;
                }
                let mut t = format!("{d:e}");
                if next() % 2 == 0 {
                    let (m, e) = t.split_once('e').unwrap_or((&t, "0"));
                    let m = if m.contains('.') {
                        m.to_owned()
                    } else {
                        format!("{m}.")
                    };
                    t = format!(
                        "{m}{}e{e}",
                        ["5", "49999999999999999", "50000000000000001"][(next() % 3) as usize]
                    );
                }
                t
            } else {
                let digits = 1 + (next() % 40) as usize;
                let mut m: String = (0..digits)
                    .map(|i| {
                        let d = (next() % 10) as u8;
                        char::from(b'0' + if i == 0 { d.max(1) } else { d })
                    })
                    .collect();
                if shape != 1 {
                    let at = 1 + (next() as usize) % digits;
                    if at < digits {
                        m.insert(at, '.');
                    }
                }
                let e = (next() % 721) as i64 - 360;
                if shape == 3 {
                    format!("{m}e{e}")
                } else if shape == 2 && e.abs() < 30 {
                    format!("{m}E{}{}", if e >= 0 { "+" } else { "-" }, e.abs())
                } else {
                    m
                }
            };
            out.push(format!("{sign}{text}"));
        }
        out
    }

    #[test]
    fn the_writer_writes_what_serde_json_writes() {
        let text = r#"{"s":"q\"b\\s/\u0000\u0001\u0008\u0009\n\u000b\f\r\u001f\u007f é😀","i":[0,-1,18446744073709551615,-9223372036854775808,9007199254740993],"w":[1.0,-0.0,100.0,-5.0,9007199254740992.0],"b":[true,false,null],"o":{},"a":[],"n":{"z":{"y":[[]]}}}"#;
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(to_text(&value), serde_json::to_string(&value).unwrap());
        let mut out = String::new();
        write_string(&mut out, "\u{7f}\"\\\u{2028}x");
        assert_eq!(out, serde_json::to_string("\u{7f}\"\\\u{2028}x").unwrap());
    }

    #[test]
    fn a_float_is_written_as_text_that_reads_back_as_it() {
        for text in HARD_NUMBERS
            .iter()
            .chain(&["1e21", "1e-300", "5e-324", "0.5", "-123.456", "1e16"])
        {
            let n: f64 = text.parse().unwrap();
            let Some(number) = serde_json::Number::from_f64(n) else {
                continue;
            };
            let mut out = String::new();
            write_number(&mut out, &number);
            let back: f64 = out.parse().unwrap();
            assert_eq!(back.to_bits(), n.to_bits(), "{text} -> {out}");
            // As serde_json writes it, up to the form of the exponent.
            let theirs = serde_json::to_string(&number).unwrap();
            assert_eq!(out.replace("e+", "e"), theirs.replace("e+", "e"), "{text}");
        }
    }
}

// `cfg(test)` on its own line: clippy's `allow-unwrap-in-tests` sees a test module only there.
#[cfg(test)]
#[cfg(target_arch = "wasm32")]
mod wasm_tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test]
    fn in_wasm_every_generated_number_reads_as_json_parse_reads_it() {
        // The oracle is the host's own `JSON.parse`, not a parser sharing this reader's assumptions.
        for text in super::tests::number_texts(20_000)
            .iter()
            .map(String::as_str)
            .chain([
                "1.7976931348623157e308",
                "1e400",
                "-1e400",
                "2.2250738585072011e-308",
            ])
        {
            let want = js_sys::JSON::parse(text).unwrap().as_f64().unwrap();
            let got = Json::parse(text).unwrap().as_f64().unwrap();
            assert_eq!(got.to_bits(), want.to_bits(), "{text}: {got:e} != {want:e}");
        }
    }

    #[wasm_bindgen_test]
    fn in_wasm_a_float_is_written_as_javascript_writes_it() {
        for (text, js) in [
            ("0.1", "0.1"),
            ("1e-7", "1e-7"),
            ("1.5e300", "1.5e+300"),
            ("0.30000000000000004", "0.30000000000000004"),
            ("2.2250738585072011e-308", "2.225073858507201e-308"),
            ("1e21", "1e+21"),
            ("-0.0", "-0.0"),
            ("1.0", "1.0"),
        ] {
            let n: f64 = text.parse().unwrap();
            let mut out = String::new();
            write_number(&mut out, &serde_json::Number::from_f64(n).unwrap());
            assert_eq!(out, js, "{text}");
            assert_eq!(out.parse::<f64>().unwrap().to_bits(), n.to_bits(), "{text}");
        }
    }
}
