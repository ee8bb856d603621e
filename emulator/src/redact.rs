//! Redaction of emails, phone numbers and personal names (deterministic heuristics).
//!
//! - email: `local@domain.tld` scanned around each `@`;
//! - phone: a run of digits, spaces, `+`, `-`, `.`, `(`, `)` holding at least 9 digits (so ISO dates are kept);
//! - name: the value of a label containing "name" (`Customer Name: Jane Smith`), and two or more consecutive
//!   Capitalized words not followed by `:` and not in a small list of common capitalized words.

use std::collections::BTreeMap;

/// Categories the emulator knows.
pub const CATEGORIES: &[&str] = &["email", "phone", "name"];

const STOP: &[&str] = &[
    "Invoice",
    "Total",
    "Amount",
    "Date",
    "Number",
    "Customer",
    "Payment",
    "Terms",
    "Due",
    "Page",
    "Dear",
    "Best",
    "Regards",
    "The",
    "This",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
    "Street",
    "Road",
];

/// Redacts `text`; `mode` `mask` replaces with `[REDACTED:CATEGORY]`, `remove` deletes. Returns the new text and counts.
pub fn redact(text: &str, categories: &[String], mode: &str) -> (String, BTreeMap<String, usize>) {
    let mut spans: Vec<(usize, usize, &'static str)> = Vec::new();
    let want = |c: &str| categories.iter().any(|x| x == c);
    if want("email") {
        spans.extend(emails(text).into_iter().map(|(a, b)| (a, b, "email")));
    }
    if want("phone") {
        spans.extend(phones(text).into_iter().map(|(a, b)| (a, b, "phone")));
    }
    if want("name") {
        spans.extend(names(text).into_iter().map(|(a, b)| (a, b, "name")));
    }
    spans.sort();
    let mut out = String::with_capacity(text.len());
    let mut counts = BTreeMap::new();
    let mut pos = 0;
    for (a, b, cat) in spans {
        if a < pos {
            continue;
        }
        out.push_str(text.get(pos..a).unwrap_or(""));
        if mode != "remove" {
            out.push_str(&format!("[REDACTED:{}]", cat.to_uppercase()));
        }
        *counts.entry(cat.to_string()).or_insert(0) += 1;
        pos = b;
    }
    out.push_str(text.get(pos..).unwrap_or(""));
    (out, counts)
}

fn emails(t: &str) -> Vec<(usize, usize)> {
    let b = t.as_bytes();
    let local = |c: u8| c.is_ascii_alphanumeric() || b"._%+-".contains(&c);
    let dom = |c: u8| c.is_ascii_alphanumeric() || c == b'.' || c == b'-';
    let mut out = Vec::new();
    for (i, c) in b.iter().enumerate() {
        if *c != b'@' {
            continue;
        }
        let mut s = i;
        while s > 0 && b.get(s - 1).is_some_and(|c| local(*c)) {
            s -= 1;
        }
        let mut e = i + 1;
        while b.get(e).is_some_and(|c| dom(*c)) {
            e += 1;
        }
        while e > i + 1 && b.get(e - 1) == Some(&b'.') {
            e -= 1;
        }
        let domain = t.get(i + 1..e).unwrap_or("");
        if s < i && domain.contains('.') {
            out.push((s, e));
        }
    }
    out
}

fn phones(t: &str) -> Vec<(usize, usize)> {
    let b = t.as_bytes();
    let part = |c: u8| c.is_ascii_digit() || b" +-.()".contains(&c);
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b
            .get(i)
            .is_some_and(|c| c.is_ascii_digit() || *c == b'+' || *c == b'(');
        let prev_ok = i == 0 || b.get(i - 1).is_some_and(|c| !c.is_ascii_alphanumeric());
        if starts && prev_ok {
            let mut e = i;
            while b.get(e).is_some_and(|c| part(*c)) {
                e += 1;
            }
            while e > i
                && b.get(e - 1)
                    .is_some_and(|c| !c.is_ascii_digit() && *c != b')')
            {
                e -= 1;
            }
            let digits = b
                .get(i..e)
                .map(|s| s.iter().filter(|c| c.is_ascii_digit()).count())
                .unwrap_or(0);
            let next_ok = b.get(e).is_none_or(|c| !c.is_ascii_alphanumeric());
            if digits >= 9 && next_ok {
                out.push((i, e));
                i = e;
                continue;
            }
        }
        i += 1;
    }
    out
}

fn names(t: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut line_start = 0;
    for line in t.split_inclusive('\n') {
        if let Some((label, value)) = line.split_once(':') {
            if label.to_ascii_lowercase().contains("name") {
                let v = value.trim();
                if !v.is_empty() {
                    let off =
                        line_start + label.len() + 1 + (value.len() - value.trim_start().len());
                    out.push((off, off + v.len()));
                }
            }
        }
        // capitalized word runs
        let mut words: Vec<(usize, usize)> = Vec::new();
        let mut idx = 0;
        for w in line.split(' ') {
            let start = idx;
            idx += w.len() + 1;
            let clean = w.trim_end_matches(['\n', '\r', ',', '.']);
            let title = clean.len() >= 2
                && clean.chars().next().is_some_and(|c| c.is_uppercase())
                && clean.chars().skip(1).all(|c| c.is_lowercase())
                && !STOP.contains(&clean);
            if title && !w.trim_end().ends_with(':') {
                words.push((line_start + start, line_start + start + clean.len()));
            } else {
                flush(&mut words, &mut out);
            }
        }
        flush(&mut words, &mut out);
        line_start += line.len();
    }
    out.sort();
    out.dedup();
    out
}

fn flush(words: &mut Vec<(usize, usize)>, out: &mut Vec<(usize, usize)>) {
    if words.len() >= 2 {
        if let (Some(f), Some(l)) = (words.first(), words.last()) {
            out.push((f.0, l.1));
        }
    }
    words.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_email_phone_and_name_but_keeps_dates() {
        let t = "Customer Name: Jane Smith\nEmail: jane.smith@example.com\nPhone: +1 415 555 0134\nDate: 2026-03-14\nMet John Doe today.";
        let cats: Vec<String> = CATEGORIES.iter().map(|s| s.to_string()).collect();
        let (out, counts) = redact(t, &cats, "mask");
        assert!(!out.contains("jane.smith@example.com"), "{out}");
        assert!(!out.contains("415 555"), "{out}");
        assert!(!out.contains("Jane Smith"), "{out}");
        assert!(!out.contains("John Doe"), "{out}");
        assert!(out.contains("2026-03-14"));
        assert!(out.contains("Customer Name:"));
        assert_eq!(counts["email"], 1);
        assert_eq!(counts["phone"], 1);
    }

    #[test]
    fn only_requested_categories_are_removed() {
        let (out, _) = redact(
            "a@b.io and +33 1 23 45 67 89",
            &["phone".to_string()],
            "remove",
        );
        assert!(out.contains("a@b.io"));
        assert!(!out.contains("45 67"));
    }
}
