//! What a user or contributor reads says what the code does and why, not how the project was worked on: no numbers of
//! the project's issues, no numbered rounds of work (an ordinal followed by "pass"), no time of a working day or
//! session ("this" followed by morning, afternoon, evening or session), no commit of the history named by its hash,
//! no file outside the repository (the API specification is named as such, not by a path only its authors can
//! open). A test (`cargo test -p xtask`, part of `cargo xtask test`) reads every tracked text file and fails naming
//! `file:line` for each such phrase.
//!
//! An algorithm's pass keeps its name when it says what it passes over or through ("the first pass over the bytes").
//! The phrases refused appear whole nowhere in this file: its tests build them from parts.

use std::collections::HashSet;

/// Tracked files that are not read: the lockfiles, written by npm and Cargo.
const NOT_READ: &[&str] = &["package-lock.json", "Cargo.lock"];

const ORDINALS: &[&str] = &[
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
];

/// After `this `: a time of the day, or a working session.
const MOMENTS: &[&str] = &["morning", "afternoon", "evening", "session"];

/// Where the project's notes and specification live outside the repository.
const OUTSIDE: &[&str] = &["spec", "notes"];

/// Whether `path` (relative to the repository, `/`-separated) is read.
fn is_read(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    !NOT_READ.contains(&name)
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Byte offsets where `word` starts in `line` as a whole word on its left.
fn starts_of<'a>(line: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    line.match_indices(word)
        .map(|(at, _)| at)
        .filter(move |&at| {
            at == 0
                || !line
                    .as_bytes()
                    .get(at - 1)
                    .copied()
                    .is_some_and(is_word_byte)
        })
}

/// "issue", or "issues", a space, an optional `#` and a digit.
fn issue_number(line: &str) -> Option<String> {
    starts_of(line, "issue").find_map(|at| {
        let rest = line.get(at + "issue".len()..)?;
        let rest = rest.strip_prefix('s').unwrap_or(rest);
        let rest = rest.strip_prefix(' ')?;
        let rest = rest.strip_prefix('#').unwrap_or(rest);
        rest.starts_with(|c: char| c.is_ascii_digit())
            .then(|| "an issue number".to_owned())
    })
}

/// An ordinal, a space or a hyphen, and the word "pass" (not "passes"), unless "over" or "through" follows it.
fn numbered_pass(line: &str) -> Option<String> {
    ORDINALS.iter().find_map(|ordinal| {
        starts_of(line, ordinal).find_map(|at| {
            let rest = line.get(at + ordinal.len()..)?;
            let rest = rest.strip_prefix(' ').or_else(|| rest.strip_prefix('-'))?;
            let after = rest.strip_prefix("pass")?;
            let whole = !after.as_bytes().first().copied().is_some_and(is_word_byte);
            let algorithm = after.starts_with(" over ") || after.starts_with(" through ");
            (whole && !algorithm).then(|| format!("a round of work (\"{ordinal} pass\")"))
        })
    })
}

/// "this" and one of [`MOMENTS`].
fn moment(line: &str) -> Option<String> {
    starts_of(line, "this ").find_map(|at| {
        let rest = line.get(at + "this ".len()..)?;
        MOMENTS.iter().find_map(|m| {
            let after = rest.strip_prefix(m)?;
            (!after.as_bytes().first().copied().is_some_and(is_word_byte))
                .then(|| format!("a moment of the work (\"this {m}\")"))
        })
    })
}

/// A path under the project's `shared/` folder (outside the repository): its `spec/` or `notes/`.
fn outside_path(line: &str) -> Option<String> {
    starts_of(line, "shared/").find_map(|at| {
        let rest = line.get(at + "shared/".len()..)?;
        OUTSIDE.iter().find_map(|dir| {
            let after = rest.strip_prefix(dir)?;
            after.starts_with('/').then(|| {
                format!(
                    "a file outside the repository (shared/{dir}/...: name the API specification, or say it here)"
                )
            })
        })
    })
}

/// A run of 7 to 40 hex digits, alone as a word, that begins one of `commits`.
fn commit_hash(line: &str, commits: &[String]) -> Option<String> {
    line.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| (7..=40).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_hexdigit()))
        .find(|w| {
            let w = w.to_ascii_lowercase();
            commits.iter().any(|c| c.starts_with(&w))
        })
        .map(|w| format!("a commit of the history by its hash ({w})"))
}

/// What is wrong with `line`, if anything.
fn finding(line: &str, commits: &[String]) -> Option<String> {
    let lower = line.to_lowercase();
    issue_number(&lower)
        .or_else(|| numbered_pass(&lower))
        .or_else(|| moment(&lower))
        .or_else(|| outside_path(&lower))
        .or_else(|| {
            lower
                .contains(concat!("the ", "brief"))
                .then(|| "a work brief".to_owned())
        })
        .or_else(|| commit_hash(line, commits))
}

/// Every finding in the text of the file `path`, as `path:line: what: the line`.
fn findings(path: &str, text: &str, commits: &[String]) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            finding(line, commits).map(|what| format!("{path}:{}: {what}: {}", i + 1, line.trim()))
        })
        .collect()
}

/// The commits of the history (full hashes), to recognise one named by a prefix of its hash.
fn commits(root: &std::path::Path) -> Result<Vec<String>, String> {
    let out = std::process::Command::new("git")
        .args(["log", "--format=%H"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("git log: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git log failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let unique: HashSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    Ok(unique.into_iter().collect())
}

/// The tracked files of the repository, relative to it.
fn tracked(root: &std::path::Path) -> Result<Vec<String>, String> {
    let out = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("git ls-files: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git ls-files failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Joins its parts: the phrases this check refuses appear whole nowhere in this file.
    fn say(parts: &[&str]) -> String {
        parts.concat()
    }

    #[test]
    fn nothing_tracked_names_the_process_of_the_work() {
        let root = crate::util::root();
        let commits = commits(&root).unwrap_or_else(|e| panic!("{e}"));
        let files = tracked(&root).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            files.len() > 100,
            "git ls-files listed {} files",
            files.len()
        );
        let mut all = Vec::new();
        for path in files.iter().filter(|p| is_read(p)) {
            // A binary file (or one removed from the work tree but still tracked) is not read.
            let Ok(bytes) = std::fs::read(root.join(path)) else {
                continue;
            };
            let Ok(text) = String::from_utf8(bytes) else {
                continue;
            };
            if text.contains('\0') {
                continue;
            }
            all.extend(findings(path, &text, &commits));
        }
        assert!(
            all.is_empty(),
            "{} lines name the process of the work instead of saying what the code does and why \
             (xtask/src/wording.rs says what is refused):\n{}",
            all.len(),
            all.join("\n")
        );
    }

    #[test]
    fn each_phrase_is_found_and_ordinary_english_is_not() {
        let commits = vec!["c0ffee1d00d0000000000000000000000000000a".to_owned()];
        let found = |line: &str| finding(line, &commits);
        for line in [
            say(&["budgets (iss", "ue 22)"]),
            say(&["// Iss", "ue 14, item 5"]),
            say(&["see iss", "ue #31"]),
            say(&["the targets of iss", "ues 22 and 31"]),
            say(&["BENCHMARKS.md's sixth ", "pass"]),
            say(&["a seventh-", "pass bullet"]),
            say(&["in the second ", "pass."]),
            say(&["measured this ", "morning"]),
            say(&["commits of this ", "session"]),
            say(&["(see ../shared/", "notes/toolchain.md)"]),
            say(&["`shared/", "spec/document-automation-api.md`"]),
            say(&["numbers of the ", "brief's list"]),
            say(&["the build before c0ff", "ee1"]),
            say(&["(C0FF", "EE1D00", ")"]),
        ] {
            assert!(found(&line).is_some(), "not found: {line}");
        }
        for line in [
            "every suite passes; a pass of the retry loop",
            "the first pass over the bytes finds the dots; a second pass through the list",
            "a first passage, the first password",
            "tissue 3, reissue 4",
            "this sessionId is kept; in this session_store",
            "realtime sessions: mint a session per page",
            "import { runChecks } from \"../shared/checks.js\";",
            "a brief pause",
            "0xc0ffee1, #c0ffee2, deadbeef, 1234567",
        ] {
            assert_eq!(found(line), None, "{line}");
        }
    }

    #[test]
    fn the_lockfiles_alone_are_not_read() {
        for path in [
            "package-lock.json",
            "tests/bundlers/package-lock.json",
            "Cargo.lock",
        ] {
            assert!(!is_read(path), "{path}");
        }
        for path in [
            "README.md",
            "CHANGELOG.md",
            "BENCHMARKS.md",
            "docs/webhooks.md",
            "src/json.rs",
            "emulator/README.md",
            "src/wasm/client/README.md",
            "www/README.md",
            "MIGRATION.md",
            "docsite/a.md",
        ] {
            assert!(is_read(path), "{path}");
        }
    }
}
