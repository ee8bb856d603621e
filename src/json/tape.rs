//! A JSON text checked once and indexed in one flat list of tokens, without building a tree: for the client's
//! params, where a 20 KB extraction schema is checked against the dialect and then sent as the caller's own text.
//! Building a `serde_json::Value` of it (a `String` per key and per string, a map per object) cost about three
//! times the check itself.
//!
//! [`Doc::parse`] accepts exactly what [`super::parse_value_exact`] accepts (the same reader refuses the same texts:
//! a lone surrogate escape, a number beyond `f64`, nesting deeper than [`super::MAX_DEPTH`]). A [`Node`] reads a
//! value where it lies: its text, a string's characters (borrowed unless escaped), the members of an object in
//! order, the items of an array, the `Value` of a member built on demand ([`Node::value`]), and the length of its
//! compact text ([`Node::compact_len`]). An object that names a member twice is found while reading
//! ([`Doc::repeats_a_name`]): there a `Value` keeps one member of the name where the text has two, so a reader that
//! needs the `Value`'s view (its members, its size) takes that path instead.

use std::borrow::Cow;

use super::{number_value, written_len, Reader, MAX_DEPTH};

/// What a [`Node`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

/// One value of the text (an object's member names are tokens too, each before its value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Token {
    tag: Tag,
    /// A string's: it holds an escape (its text is not its characters). A boolean's: its value.
    flag: bool,
    /// Where its text starts and ends (a string's with its quotes).
    start: u32,
    end: u32,
    /// The token after this value (after a container's last descendant).
    next: u32,
}

/// A JSON text and its tokens.
#[derive(Clone, Debug, PartialEq)]
pub struct Doc {
    text: String,
    tokens: Vec<Token>,
    repeats_a_name: bool,
    /// The text is its own compact form (no whitespace, no escape, no number): a value's compact length is the
    /// length of its text.
    compact: bool,
}

impl Doc {
    /// Reads one JSON text (whitespace around it allowed); gives the text back where [`super::parse_value_exact`]
    /// gives `None`.
    pub fn parse(text: String) -> Result<Doc, String> {
        Self::read(text, true)
    }

    /// [`Doc::parse`] of a text whose objects name each member once, as `JSON.stringify` writes every text (a
    /// `Proxy` whose keys repeat makes it throw): its names are not compared, and [`Doc::repeats_a_name`] is false.
    pub fn parse_unique(text: String) -> Result<Doc, String> {
        Self::read(text, false)
    }

    fn read(text: String, check_names: bool) -> Result<Doc, String> {
        // Offsets are `u32`: a text of 4 GiB is not a request body.
        if u32::try_from(text.len()).is_err() {
            return Err(text);
        }
        let mut builder = Builder {
            reader: Reader::new(&text),
            // A schema's text has about one token per 12 bytes (a property: its name, an object, two names, two
            // strings): room for one per 8, so most params take one allocation and none is copied to grow.
            tokens: Vec::with_capacity(text.len() / 8 + 4),
            slots: Vec::new(),
            check_names,
            repeats_a_name: false,
            plain: true,
        };
        let read = builder.value(0).and_then(|()| {
            builder.reader.skip_space();
            (builder.reader.at == text.len()).then_some(())
        });
        let compact = builder.plain && !builder.reader.spaced;
        let (tokens, repeats_a_name) = (builder.tokens, builder.repeats_a_name);
        match read {
            Some(()) => Ok(Doc {
                text,
                tokens,
                repeats_a_name,
                compact,
            }),
            None => Err(text),
        }
    }

    /// The whole value.
    pub fn root(&self) -> Node<'_> {
        Node { doc: self, at: 0 }
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text, given back.
    pub fn into_text(self) -> String {
        self.text
    }

    /// Whether an object of the text names a member twice (`{"a":1,"a":2}`).
    pub fn repeats_a_name(&self) -> bool {
        self.repeats_a_name
    }
}

struct Builder<'a> {
    reader: Reader<'a, serde_json::Value>,
    tokens: Vec<Token>,
    /// The open-addressing table of [`Builder::names_repeat`] (token index + 1; 0 is empty), kept between objects.
    slots: Vec<u32>,
    /// Whether objects are checked for a name given twice.
    check_names: bool,
    repeats_a_name: bool,
    /// No escape and no number so far.
    plain: bool,
}

impl Builder<'_> {
    fn push(&mut self, tag: Tag, flag: bool, start: usize) -> usize {
        let at = self.tokens.len();
        self.tokens.push(Token {
            tag,
            flag,
            start: start as u32,
            end: self.reader.at as u32,
            next: at as u32 + 1,
        });
        at
    }

    /// Closes the container at `at` after its last descendant.
    fn close(&mut self, at: usize) {
        let (end, next) = (self.reader.at as u32, self.tokens.len() as u32);
        if let Some(token) = self.tokens.get_mut(at) {
            token.end = end;
            token.next = next;
        }
    }

    /// Reads a string; whether it held an escape.
    fn string(&mut self) -> Option<bool> {
        let escaped = self.reader.string_into(&mut ())?;
        self.plain &= !escaped;
        Some(escaped)
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        self.reader.skip_space();
        let start = self.reader.at;
        let (tag, flag) = match self.reader.peek()? {
            b'n' => self.reader.expect(b"null").map(|()| (Tag::Null, false))?,
            b't' => self.reader.expect(b"true").map(|()| (Tag::Bool, true))?,
            b'f' => self.reader.expect(b"false").map(|()| (Tag::Bool, false))?,
            b'"' => (Tag::String, self.string()?),
            // A number beyond `f64` is refused, as `parse_value_exact` refuses it; one that is not may be written
            // otherwise (`1E2`, `1.0`), so the text is not its compact form.
            b'-' | b'0'..=b'9' => (
                self.reader.number().filter(|n| n.is_finite()).map(|_| {
                    self.plain = false;
                    Tag::Number
                })?,
                false,
            ),
            b'[' if depth < MAX_DEPTH => return self.container(Tag::Array, start, depth + 1),
            b'{' if depth < MAX_DEPTH => return self.container(Tag::Object, start, depth + 1),
            _ => return None,
        };
        self.push(tag, flag, start);
        Some(())
    }

    /// An array or an object (`tag`), the reader on its opening bracket: its token, then each item, or each member's
    /// name and value.
    fn container(&mut self, tag: Tag, start: usize, depth: usize) -> Option<()> {
        let object = tag == Tag::Object;
        let closing = if object { b'}' } else { b']' };
        self.reader.at += 1;
        let at = self.push(tag, false, start);
        self.reader.skip_space();
        if self.reader.peek()? == closing {
            self.reader.at += 1;
        } else {
            loop {
                if object {
                    self.name()?;
                }
                self.value(depth)?;
                self.reader.skip_space();
                match self.reader.next()? {
                    b',' => {}
                    b if b == closing => break,
                    _ => return None,
                }
            }
        }
        self.close(at);
        if object && self.check_names && !self.repeats_a_name && self.names_repeat(at) {
            self.repeats_a_name = true;
        }
        Some(())
    }

    /// A member's name and its colon.
    fn name(&mut self) -> Option<()> {
        self.reader.skip_space();
        if self.reader.peek()? != b'"' {
            return None;
        }
        let start = self.reader.at;
        let escaped = self.string()?;
        self.push(Tag::String, escaped, start);
        self.reader.skip_space();
        (self.reader.next()? == b':').then_some(())
    }

    /// Whether the object at `at` names a member twice, through a hash table of its names (a schema's `properties`
    /// has hundreds).
    fn names_repeat(&mut self, at: usize) -> bool {
        let doc = Partial {
            text: self.reader.text,
            tokens: &self.tokens,
        };
        let names = doc.member_names(at);
        let mut pair = names.clone();
        match (pair.next(), pair.next(), pair.next()) {
            (Some(_), None, _) | (None, _, _) => return false,
            (Some(a), Some(b), None) => return doc.same_name(a, b),
            _ => {}
        }
        let count = names.clone().count();
        let size = (count * 2).next_power_of_two();
        self.slots.clear();
        self.slots.resize(size, 0);
        for name in names {
            let mut slot = name_hash(doc.chars(name).as_bytes()) as usize & (size - 1);
            loop {
                match self.slots.get(slot).copied() {
                    Some(0) | None => {
                        if let Some(s) = self.slots.get_mut(slot) {
                            *s = name as u32 + 1;
                        }
                        break;
                    }
                    Some(other) if doc.same_name(other as usize - 1, name) => return true,
                    Some(_) => slot = (slot + 1) & (size - 1),
                }
            }
        }
        false
    }
}

/// A hash of a name from its length and its first and last eight bytes (names differ there; equal hashes are
/// compared in full).
fn name_hash(bytes: &[u8]) -> u64 {
    let word = |part: &[u8]| {
        let mut w = [0; 8];
        for (to, from) in w.iter_mut().zip(part) {
            *to = *from;
        }
        u64::from_le_bytes(w)
    };
    let tail = bytes
        .get(bytes.len().saturating_sub(8)..)
        .unwrap_or_default();
    let mixed = word(bytes) ^ word(tail).rotate_left(29) ^ bytes.len() as u64;
    mixed.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 17
}

/// The text and the tokens read so far (while a [`Doc`] is being read) or all of them.
#[derive(Clone, Copy)]
struct Partial<'d> {
    text: &'d str,
    tokens: &'d [Token],
}

impl<'d> Partial<'d> {
    fn token(self, at: usize) -> Token {
        self.tokens.get(at).copied().unwrap_or(Token {
            tag: Tag::Null,
            flag: false,
            start: 0,
            end: 0,
            next: u32::MAX,
        })
    }

    /// The text of the token at `at`.
    fn text_of(self, at: usize) -> &'d str {
        let t = self.token(at);
        self.text
            .get(t.start as usize..t.end as usize)
            .unwrap_or("")
    }

    /// The characters of the string at `at`: its text without the quotes, or read when it holds an escape.
    fn chars(self, at: usize) -> Cow<'d, str> {
        let token = self.token(at);
        let (start, end) = (token.start as usize, token.end as usize);
        if token.flag {
            let text = self.text.get(start..end).unwrap_or("");
            Cow::Owned(
                Reader::<serde_json::Value>::new(text)
                    .string()
                    .unwrap_or_default(),
            )
        } else {
            Cow::Borrowed(
                self.text
                    .get(start + 1..end.saturating_sub(1))
                    .unwrap_or(""),
            )
        }
    }

    /// Whether the strings at `a` and `b` have the same characters.
    fn same_name(self, a: usize, b: usize) -> bool {
        self.chars(a) == self.chars(b)
    }

    /// The tokens of the member names of the object at `at` (none for another value).
    fn member_names(self, at: usize) -> impl Iterator<Item = usize> + Clone + 'd {
        self.children(at, Tag::Object)
    }

    /// The tokens of the items of the array at `at` (none for another value).
    fn items(self, at: usize) -> impl Iterator<Item = usize> + Clone + 'd {
        self.children(at, Tag::Array)
    }

    /// The tokens of the items of an array, or of the member names of an object (each followed by its value), when
    /// the token at `at` is a `tag`.
    fn children(self, at: usize, tag: Tag) -> impl Iterator<Item = usize> + Clone + 'd {
        let token = self.token(at);
        let end = if token.tag == tag {
            token.next as usize
        } else {
            0
        };
        let mut child = at + 1;
        core::iter::from_fn(move || {
            if child >= end || child >= self.tokens.len() {
                return None;
            }
            let here = child;
            // An item is followed by the next; a member's name by its value, then the next name.
            let value = if tag == Tag::Object { here + 1 } else { here };
            child = self.token(value).next as usize;
            Some(here)
        })
    }
}

/// A value of a [`Doc`].
#[derive(Clone, Copy, Debug)]
pub struct Node<'d> {
    doc: &'d Doc,
    at: usize,
}

impl<'d> Node<'d> {
    fn all(self) -> Partial<'d> {
        Partial {
            text: &self.doc.text,
            tokens: &self.doc.tokens,
        }
    }

    fn at(self, at: usize) -> Self {
        Self { doc: self.doc, at }
    }

    /// What it holds.
    pub fn tag(self) -> Tag {
        self.all().token(self.at).tag
    }

    /// Its text as written (a string's with its quotes and escapes).
    pub fn text(self) -> &'d str {
        self.all().text_of(self.at)
    }

    /// The boolean, if this is one.
    pub fn as_bool(self) -> Option<bool> {
        (self.tag() == Tag::Bool).then(|| self.all().token(self.at).flag)
    }

    /// The string's characters, if this is one (borrowed from the text unless it holds an escape).
    pub fn as_str(self) -> Option<Cow<'d, str>> {
        (self.tag() == Tag::String).then(|| self.all().chars(self.at))
    }

    /// The members of an object in the text's order (none for another value).
    pub fn members(self) -> impl Iterator<Item = (Cow<'d, str>, Node<'d>)> + Clone + 'd {
        let all = self.all();
        all.member_names(self.at)
            .map(move |name| (all.chars(name), self.at(name + 1)))
    }

    /// The items of an array (none for another value).
    pub fn items(self) -> impl Iterator<Item = Node<'d>> + Clone + 'd {
        self.all().items(self.at).map(move |at| self.at(at))
    }

    /// The member `name` of an object (the last one of the name, as `JSON.parse` reads it).
    pub fn get(self, name: &str) -> Option<Node<'d>> {
        let all = self.all();
        all.member_names(self.at)
            .filter(|&at| all.chars(at) == name)
            .last()
            .map(|at| self.at(at + 1))
    }

    /// The value as [`super::parse_value_exact`] reads its text.
    pub fn value(self) -> serde_json::Value {
        // The text was read once already, so it reads again (a nested value is within the depth its document was).
        super::parse_value_exact(self.text()).unwrap_or(serde_json::Value::Null)
    }

    /// The number, if this is one, as [`super::parse_value_exact`] reads it (a whole number within 2^53 an integer).
    pub fn number(self) -> Option<serde_json::Number> {
        if self.tag() != Tag::Number {
            return None;
        }
        match Reader::<serde_json::Value>::new(self.text())
            .number()
            .and_then(number_value)?
        {
            serde_json::Value::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The length of the value's compact text as [`super::to_text`] writes the `Value` of it (strings with the
    /// fewest escapes, numbers as [`super::write_number`] writes them), counted without writing it. In an object that
    /// names a member twice this counts both (see [`Doc::repeats_a_name`]).
    pub fn compact_len(self) -> usize {
        // One pass over the value's tokens (its own and its descendants'): each leaf's text, two brackets per
        // container, and one separator before every token but the first of a container (a comma, or a member's
        // colon): every token but the value's own, less one per container that holds any.
        let all = self.all();
        let token = all.token(self.at);
        if self.doc.compact {
            return (token.end - token.start) as usize;
        }
        let end = (token.next as usize).min(all.tokens.len());
        let (mut sum, mut filled) = (0_usize, 0_usize);
        for at in self.at..end {
            let token = all.token(at);
            sum += match token.tag {
                Tag::Null => 4,
                Tag::Bool => 5 - usize::from(token.flag),
                Tag::String if token.flag => written_len(&all.chars(at)),
                // No escape: nothing in it is escaped when written (a quote, a backslash or a control character
                // would have to be), so it is written as it is.
                Tag::String => (token.end - token.start) as usize,
                Tag::Number => self.at(at).number().map_or(0, |n| {
                    let mut out = String::new();
                    super::write_number(&mut out, &n);
                    out.len()
                }),
                Tag::Array | Tag::Object => {
                    filled += usize::from(token.next as usize > at + 1);
                    2
                }
            };
        }
        sum + end.saturating_sub(self.at + 1).saturating_sub(filled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse_value_exact, to_text, MAX_DEPTH};

    fn doc(text: &str) -> Doc {
        Doc::parse(text.to_owned()).unwrap_or_else(|t| panic!("did not read: {t}"))
    }

    /// The oracle: the `Value` reader. Same texts accepted; the same value; the same compact length (for a text that
    /// names no member twice).
    fn agrees(text: &str) {
        let value = parse_value_exact(text);
        let read = Doc::parse(text.to_owned());
        assert_eq!(read.is_ok(), value.is_some(), "{text:?}");
        if let (Ok(d), Some(v)) = (read, value) {
            assert_eq!(d.root().value(), v, "{text:?}");
            if !d.repeats_a_name() {
                assert_eq!(d.root().compact_len(), to_text(&v).len(), "{text:?}");
            }
        }
    }

    #[test]
    fn accepts_and_refuses_what_the_value_reader_does() {
        let deep_ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        let too_deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        for text in [
            "null",
            " true ",
            "false",
            "0",
            "-0",
            "1.0",
            "1e2",
            "-1.5E-3",
            "0.1",
            "9007199254740993",
            "1e308",
            "1e400",
            "-1e400",
            "01",
            "1.",
            ".5",
            "-",
            "\"\"",
            "\"a\\\"b\"",
            "\"\\u00e9\\/\\b\\f\\n\\r\\t\\u0001\"",
            "\"\\ud83d\\ude00\"",
            "\"\\ud800\"",
            "\"\\udc00x\"",
            "\"\u{1}\"",
            "\"é😀\"",
            "[]",
            "{}",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{a:1}",
            "[1 2]",
            "{\"a\":[1,{\"b\":null}],\"c\":\"d\"}",
            " { \"a\" : [ 1 , 2 ] } ",
            "[1] x",
            "",
            "   ",
            "nul",
            "tru",
            "[\"a\",true,false,null,-1e-7,1.5e300]",
            &deep_ok,
            &too_deep,
            "{\"\\u0061\":1,\"b\":{\"c\":[{},[]]}}",
        ] {
            agrees(text);
        }
    }

    #[test]
    fn a_text_that_is_its_own_compact_form_counts_its_length() {
        let cases = [
            (r#"{"a":"b","c":[true,null,{},[]],"d":{"e":"é😀"}}"#, true),
            (r#"{"a": "b"}"#, false),
            ("[true]\n", false),
            (r#"{"a":"\u0062"}"#, false),
            (r#"{"a":"x\"y"}"#, false),
            (r#"{"a":1}"#, false),
            (r#"[1E2]"#, false),
        ];
        for (text, compact) in cases {
            let doc = doc(text);
            assert_eq!(doc.compact, compact, "{text}");
            let value = parse_value_exact(text).unwrap();
            assert_eq!(doc.root().compact_len(), to_text(&value).len(), "{text}");
            for (name, node) in doc.root().members() {
                let member = value.get(name.as_ref()).unwrap();
                assert_eq!(node.compact_len(), to_text(member).len(), "{text} {name}");
            }
        }
    }

    #[test]
    fn agrees_with_the_value_reader_on_generated_texts() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut rand = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        fn gen(rand: &mut dyn FnMut(u64) -> u64, depth: u32, out: &mut String) {
            let space = |rand: &mut dyn FnMut(u64) -> u64, out: &mut String| {
                if rand(4) == 0 {
                    out.push_str([" ", "\n", "\t ", "\r\n"][rand(4) as usize]);
                }
            };
            space(rand, out);
            let strings = [
                "\"a\"",
                "\"b\"",
                "\"\\u0061\"",
                "\"é\"",
                "\"x\\\"y\"",
                "\"\\u0007\"",
                "\"\\/\"",
                "\"😀\"",
            ];
            let numbers = [
                "0",
                "-0",
                "1",
                "1.0",
                "2.5",
                "1e3",
                "-7",
                "1e21",
                "123456789012345678",
                "0.1",
                "-0.0",
            ];
            let pick = if depth > 3 { rand(4) } else { rand(6) };
            match pick {
                0 => out.push_str(["null", "true", "false"][rand(3) as usize]),
                1 => out.push_str(numbers[rand(numbers.len() as u64) as usize]),
                2 | 3 => out.push_str(strings[rand(strings.len() as u64) as usize]),
                4 => {
                    out.push('[');
                    for i in 0..rand(4) {
                        if i > 0 {
                            out.push(',');
                        }
                        gen(rand, depth + 1, out);
                    }
                    out.push(']');
                }
                _ => {
                    out.push('{');
                    for i in 0..rand(12) {
                        if i > 0 {
                            out.push(',');
                        }
                        space(rand, out);
                        out.push_str(strings[rand(strings.len() as u64) as usize]);
                        out.push(':');
                        gen(rand, depth + 1, out);
                    }
                    out.push('}');
                }
            }
            space(rand, out);
        }
        let (mut repeating, mut plain) = (0, 0);
        for _ in 0..3000 {
            let mut text = String::new();
            gen(&mut rand, 0, &mut text);
            agrees(&text);
            // Repeated names are found however they are written (`"a"` and `"\u0061"`), in small and large objects.
            let doc = Doc::parse(text.clone()).unwrap();
            let repeats = doc.repeats_a_name();
            assert_eq!(
                repeats,
                names_repeat_in(&Json::parse(&text).unwrap()),
                "{text}"
            );
            // Read without comparing names, the same tokens, and no repeat reported.
            let unique = Doc::parse_unique(text.clone()).unwrap();
            assert_eq!(unique.tokens, doc.tokens, "{text}");
            assert!(!unique.repeats_a_name(), "{text}");
            if repeats {
                repeating += 1
            } else {
                plain += 1
            }
        }
        assert!(repeating > 100 && plain > 100, "{repeating} {plain}");
    }

    use crate::json::Json;

    fn names_repeat_in(value: &Json) -> bool {
        match value {
            Json::Object(members) => {
                members
                    .iter()
                    .enumerate()
                    .any(|(i, (a, _))| members.iter().skip(i + 1).any(|(b, _)| a == b))
                    || members.iter().any(|(_, v)| names_repeat_in(v))
            }
            Json::Array(items) => items.iter().any(names_repeat_in),
            _ => false,
        }
    }

    #[test]
    fn reads_members_items_and_strings_where_they_lie() {
        let d = doc(r#"{"b":1,"a\u00e9":"x\ny","c":[true,null,{"d":2}],"b":"last"}"#);
        let root = d.root();
        assert_eq!(root.tag(), Tag::Object);
        let names: Vec<String> = root.members().map(|(k, _)| k.into_owned()).collect();
        assert_eq!(names, ["b", "aé", "c", "b"]);
        assert!(d.repeats_a_name());
        assert_eq!(
            root.get("b").and_then(Node::as_str).as_deref(),
            Some("last")
        );
        assert_eq!(
            root.get("aé").and_then(Node::as_str).as_deref(),
            Some("x\ny")
        );
        assert_eq!(root.get("zz").map(Node::tag), None);
        let c = root.get("c").unwrap();
        assert_eq!(c.text(), r#"[true,null,{"d":2}]"#);
        let tags: Vec<Tag> = c.items().map(Node::tag).collect();
        assert_eq!(tags, [Tag::Bool, Tag::Null, Tag::Object]);
        assert_eq!(c.items().next().and_then(Node::as_bool), Some(true));
        assert_eq!(
            c.items().nth(2).unwrap().get("d").unwrap().number(),
            Some(2.into())
        );
        assert_eq!(root.members().count(), 4);
        // Not an object or array: no members, no items.
        assert_eq!(root.get("b").unwrap().members().count(), 0);
        assert_eq!(root.items().count(), 0);
        // A string's characters are borrowed from the text unless it holds an escape.
        let plain = doc(r#"{"k":"v"}"#);
        assert!(matches!(
            plain.root().get("k").unwrap().as_str(),
            Some(Cow::Borrowed("v"))
        ));
    }

    #[test]
    fn finds_a_repeated_name_in_a_large_object_and_none_in_distinct_ones() {
        let names = |n: usize, last: &str| {
            let mut t = String::from("{");
            for i in 0..n {
                t.push_str(&format!("\"field_{i}\":{i},"));
            }
            t.push_str(&format!("\"{last}\":0}}"));
            t
        };
        assert!(!doc(&names(300, "other")).repeats_a_name());
        assert!(doc(&names(300, "field_17")).repeats_a_name());
        assert!(doc(&names(300, "field\\u005f17")).repeats_a_name());
        assert!(!doc(&names(3, "other")).repeats_a_name());
        assert!(doc(&names(3, "field_2")).repeats_a_name());
    }
}
