//! Text out of documents: plain text, markdown, and PDF (through `lopdf`).

/// A document's text, one string per page (0-based order).
#[derive(Debug, Clone, PartialEq)]
pub struct DocText {
    /// Page texts.
    pub pages: Vec<String>,
    /// Whether the source was markdown.
    pub markdown: bool,
}

/// Why text could not be taken out.
#[derive(Debug, Clone, PartialEq)]
pub enum DocError {
    /// The type is not one the emulator reads (422 `file_ineligible`).
    Ineligible(String),
    /// The bytes are not readable as their type (502 `file_unreadable`).
    Unreadable(String),
}

/// Whether a MIME type is supported.
pub fn supported(mime: &str) -> bool {
    mime.starts_with("text/") || mime == "application/pdf" || mime == "application/json"
}

/// Takes the text out of a document. Text pages are split on form feeds.
///
/// # Errors
/// [`DocError`] for unsupported types and unreadable bytes.
pub fn text_of(bytes: &[u8], mime: &str) -> Result<DocText, DocError> {
    if mime == "application/pdf" || bytes.starts_with(b"%PDF") {
        return pdf_text(bytes);
    }
    if !supported(mime) {
        return Err(DocError::Ineligible(format!(
            "documents of type {mime} cannot be read (text, markdown and PDF only)"
        )));
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|_| DocError::Unreadable("the text is not valid UTF-8".into()))?;
    Ok(DocText {
        pages: text.split('\u{c}').map(String::from).collect(),
        markdown: mime == "text/markdown",
    })
}

fn pdf_text(bytes: &[u8]) -> Result<DocText, DocError> {
    let doc = lopdf::Document::load_mem(bytes)
        .map_err(|e| DocError::Unreadable(format!("the PDF could not be read ({e})")))?;
    let mut pages = Vec::new();
    for page_id in doc.get_pages().values() {
        let t = page_text(&doc, *page_id).unwrap_or_default();
        pages.push(
            t.lines()
                .map(str::trim_end)
                .collect::<Vec<_>>()
                .join("\n")
                .trim()
                .to_string(),
        );
    }
    if pages.is_empty() {
        return Err(DocError::Unreadable("the PDF has no pages".into()));
    }
    Ok(DocText {
        pages,
        markdown: false,
    })
}

/// Text of one page, with a line break at every line move (`Td`/`TD` with a vertical offset, `T*`, `'`, `"`,
/// a `Tm` changing the baseline, and `ET`).
fn page_text(doc: &lopdf::Document, page_id: lopdf::ObjectId) -> Result<String, lopdf::Error> {
    use lopdf::Object;
    fn collect(out: &mut String, enc: Option<&lopdf::Encoding>, operands: &[Object]) {
        for o in operands {
            match o {
                Object::String(bytes, _) => match enc {
                    Some(e) => {
                        out.push_str(&lopdf::Document::decode_text(e, bytes).unwrap_or_default())
                    }
                    None => out.push_str(&String::from_utf8_lossy(bytes)),
                },
                Object::Array(a) => collect(out, enc, a),
                Object::Integer(i) if *i < -100 => out.push(' '),
                Object::Real(r) if *r < -100.0 => out.push(' '),
                _ => {}
            }
        }
    }
    fn newline(t: &mut String) {
        if !t.is_empty() && !t.ends_with('\n') {
            t.push('\n');
        }
    }
    fn num(o: Option<&Object>) -> f64 {
        match o {
            Some(Object::Integer(i)) => *i as f64,
            Some(Object::Real(r)) => f64::from(*r),
            _ => 0.0,
        }
    }
    let fonts = doc.get_page_fonts(page_id)?;
    let encodings: std::collections::BTreeMap<Vec<u8>, lopdf::Encoding> = fonts
        .into_iter()
        .filter_map(|(n, f)| f.get_font_encoding(doc).ok().map(|e| (n, e)))
        .collect();
    let content = lopdf::content::Content::decode(&doc.get_page_content(page_id)?)?;
    let mut enc = None;
    let mut text = String::new();
    let mut last_y: Option<f64> = None;
    for op in &content.operations {
        match op.operator.as_str() {
            "Tf" => {
                enc = op
                    .operands
                    .first()
                    .and_then(|o| o.as_name().ok())
                    .and_then(|n| encodings.get(n))
            }
            "Td" | "TD" if num(op.operands.get(1)) != 0.0 => newline(&mut text),
            "Tm" => {
                let y = num(op.operands.get(5));
                if last_y.is_some_and(|l| (l - y).abs() > 0.01) {
                    newline(&mut text);
                }
                last_y = Some(y);
            }
            "T*" | "ET" => newline(&mut text),
            "'" | "\"" => {
                newline(&mut text);
                collect(
                    &mut text,
                    enc,
                    op.operands
                        .last()
                        .map(std::slice::from_ref)
                        .unwrap_or_default(),
                );
            }
            "Tj" | "TJ" => collect(&mut text, enc, &op.operands),
            _ => {}
        }
    }
    Ok(text)
}

/// Builds a small one-font PDF whose pages hold the given lines (used by tests and the demo).
pub fn make_pdf(pages: &[&[&str]]) -> Vec<u8> {
    let mut objs: Vec<String> = Vec::new();
    let n_pages = pages.len();
    // 1: catalog, 2: pages, 3: font, then per page: page obj, content obj
    let kids: Vec<String> = (0..n_pages).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
    objs.push("<< /Type /Catalog /Pages 2 0 R >>".into());
    objs.push(format!(
        "<< /Type /Pages /Kids [{}] /Count {n_pages} >>",
        kids.join(" ")
    ));
    objs.push(
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".into(),
    );
    for (i, lines) in pages.iter().enumerate() {
        let mut content = String::from("BT /F1 12 Tf 72 740 Td 14 TL\n");
        for l in lines.iter() {
            let esc = l
                .replace('\\', "\\\\")
                .replace('(', "\\(")
                .replace(')', "\\)");
            content.push_str(&format!("({esc}) Tj T*\n"));
        }
        content.push_str("ET");
        objs.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            5 + 2 * i
        ));
        objs.push(format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len()
        ));
    }
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objs.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n{o}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objs.len() + 1).as_bytes());
    for off in offsets {
        out.extend(format!("{off:010} 00000 n \n").as_bytes());
    }
    out.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objs.len() + 1
        )
        .as_bytes(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pdf_text_comes_out_per_page() {
        let pdf = make_pdf(&[&["Invoice Number: INV-7", "Total: 12.50"], &["Second page"]]);
        let d = text_of(&pdf, "application/pdf").unwrap();
        assert_eq!(d.pages.len(), 2);
        assert_eq!(d.pages[0], "Invoice Number: INV-7\nTotal: 12.50");
        assert!(d.pages[1].contains("Second page"));
    }

    #[test]
    fn broken_pdf_is_unreadable_and_images_are_ineligible() {
        assert!(matches!(
            text_of(b"%PDF-1.4 garbage", "application/pdf"),
            Err(DocError::Unreadable(_))
        ));
        assert!(matches!(
            text_of(b"\x89PNG", "image/png"),
            Err(DocError::Ineligible(_))
        ));
    }

    #[test]
    fn form_feed_splits_text_pages() {
        let d = text_of(b"a\x0cb", "text/plain").unwrap();
        assert_eq!(d.pages, vec!["a", "b"]);
    }
}
