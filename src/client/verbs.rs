//! The six capability verbs (plus extract batch): one POST each, `wait` 0..120 (server default
//! 60), a 202 with the run handle when not finished in time. Fields the spec does not list are
//! passed through from `extra` untouched (the spec says complete field lists are not shown).

use super::common::{to_body, validate_files, FileRef, WebhookRef};
use super::error::ApiError;
use super::request::{Method, RequestSpec};
use super::validate;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Fields every verb shares, declared in each params struct.
macro_rules! verb_params {
    ($(#[$meta:meta])* $name:ident { $($(#[$fmeta:meta])* $field:ident : $ty:ty,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            $($(#[$fmeta])* #[serde(default, skip_serializing_if = "Option::is_none")] pub $field: Option<$ty>,)*
            /// Caller key/values, at most 10 KB.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub metadata: Option<Value>,
            /// Destination of the run's events.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub webhook: Option<WebhookRef>,
            /// Seconds until the run is purged (default 86400, at most 604800).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub ttl: Option<u64>,
            /// Further fields, sent as given.
            #[serde(flatten)]
            pub extra: Map<String, Value>,
        }

        impl $name {
            fn check_common(&self) -> Result<(), ApiError> {
                if let Some(m) = &self.metadata {
                    validate::metadata(m)?;
                }
                if let Some(w) = &self.webhook {
                    w.validate()?;
                }
                if let Some(t) = self.ttl {
                    validate::ttl(t)?;
                }
                Ok(())
            }
        }
    };
}

verb_params! {
    /// Body of `POST /v1/extract`.
    ExtractParams {
        /// One document.
        file: FileRef,
        /// Several documents (up to 100).
        files: Vec<FileRef>,
        /// JSON schema of the result (dialect checked before sending).
        schema: Value,
        /// Plain-language description of what to extract (not with `schema` or `action`).
        hints: String,
        /// Saved action id or slug.
        action: String,
        /// Ground each value in the document.
        citations: bool,
        /// Extra instructions.
        instructions: String,
        /// `per_document`, `across_documents`, `rows_per_document`.
        unit: String,
    }
}

verb_params! {
    /// Body of `POST /v1/extract/batch` (always 202; `idempotency-key` is ignored by the service).
    ExtractBatchParams {
        /// Saved action (required).
        action: String,
        /// Documents, 1 to 100.
        files: Vec<FileRef>,
        /// Citations on or off.
        citations: bool,
        /// Rejected: batches use a saved action.
        schema: Value,
        /// Rejected: batches use a saved action.
        hints: Value,
    }
}

verb_params! {
    /// Body of `POST /v1/parse`.
    ParseParams {
        /// One document.
        file: FileRef,
        /// Several documents.
        files: Vec<FileRef>,
    }
}

verb_params! {
    /// Body of `POST /v1/redact`.
    RedactParams {
        /// One document.
        file: FileRef,
        /// Several documents.
        files: Vec<FileRef>,
        /// Categories of personal data.
        categories: Vec<String>,
        /// Redaction mode.
        mode: String,
        /// Saved action.
        action: String,
    }
}

/// `{id}` of a fill template.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateRef {
    /// File id of the form PDF.
    pub id: String,
}

verb_params! {
    /// Body of `POST /v1/fill`: a template plus exactly one of `values` or `files`.
    FillParams {
        /// The form.
        template: TemplateRef,
        /// Deterministic values.
        values: Value,
        /// Sources to draft the values from.
        files: Vec<FileRef>,
        /// Output option.
        output: String,
        /// Review option.
        review: String,
        /// Saved action.
        action: String,
    }
}

/// A signer of an envelope.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signer {
    /// Name.
    pub name: String,
    /// Email.
    pub email: String,
}

verb_params! {
    /// Body of `POST /v1/sign` (always 202 with status `needs_input`).
    SignParams {
        /// The document.
        file: FileRef,
        /// Signers, at least one.
        signers: Vec<Signer>,
        /// Saved sign action.
        action: String,
    }
}

verb_params! {
    /// Body of `POST /v1/pipeline`: several capabilities over one file set, in parallel.
    PipelineParams {
        /// One document.
        file: FileRef,
        /// Documents.
        files: Vec<FileRef>,
        /// Steps, each an object keyed by a capability name holding its config.
        steps: Vec<Value>,
    }
}

/// `file` XOR `files`, one of them present, files 1..=100.
fn check_inputs(file: Option<&FileRef>, files: Option<&Vec<FileRef>>) -> Result<(), ApiError> {
    validate::exclusive("file", file.is_some(), "files", files.is_some())?;
    match (file, files) {
        (Some(f), None) => f.validate("file"),
        (None, Some(list)) => validate_files("files", list, 1, validate::MAX_VERB_FILES),
        _ => Err(ApiError::validation(
            "invalid_request",
            "file",
            "a file (or files) is required",
        )),
    }
}

/// A verb's run creation (the service dedupes its `idempotency-key`).
fn post(path: &str, body: Value) -> RequestSpec {
    RequestSpec::api(Method::Post, path.to_owned())
        .with_body(body)
        .with_wait(None)
        .run_creation()
}

/// `POST /v1/extract`.
///
/// # Errors
/// `invalid_request` for `file` with `files`, neither, more than 100 files, `schema` with
/// `action`, `hints` with either, bad metadata/webhook/ttl; `invalid_schema` or
/// `schema_too_large` for a schema outside the dialect.
pub fn extract(p: &ExtractParams) -> Result<RequestSpec, ApiError> {
    check_inputs(p.file.as_ref(), p.files.as_ref())?;
    validate::exclusive("schema", p.schema.is_some(), "action", p.action.is_some())?;
    validate::exclusive("hints", p.hints.is_some(), "schema", p.schema.is_some())?;
    validate::exclusive("hints", p.hints.is_some(), "action", p.action.is_some())?;
    if let Some(schema) = &p.schema {
        validate::schema_at(schema, "schema")?;
    }
    p.check_common()?;
    Ok(post("/v1/extract", to_body(p)?))
}

/// `POST /v1/extract/batch`.
///
/// # Errors
/// `invalid_request` when `action` is missing, `schema` or `hints` is present, or `files` is not
/// 1 to 100 valid references, plus the shared field rules.
pub fn extract_batch(p: &ExtractBatchParams) -> Result<RequestSpec, ApiError> {
    if p.schema.is_some() || p.hints.is_some() {
        let field = if p.schema.is_some() {
            "schema"
        } else {
            "hints"
        };
        return Err(ApiError::validation(
            "invalid_request",
            field,
            "is not accepted by extract batch; use a saved action",
        ));
    }
    validate::required_text("action", p.action.as_deref().unwrap_or(""))?;
    match &p.files {
        Some(files) => validate_files("files", files, 1, validate::MAX_VERB_FILES)?,
        None => {
            return Err(ApiError::validation(
                "invalid_request",
                "files",
                "is required",
            ))
        }
    }
    p.check_common()?;
    // Extract batch ignores `idempotency-key` (spec): not a deduped run creation.
    let mut spec = post("/v1/extract/batch", to_body(p)?);
    spec.retry = super::request::RetryClass::NotReplaySafe;
    Ok(spec)
}

/// `POST /v1/parse`.
///
/// # Errors
/// `invalid_request` for the input and shared field rules.
pub fn parse(p: &ParseParams) -> Result<RequestSpec, ApiError> {
    check_inputs(p.file.as_ref(), p.files.as_ref())?;
    p.check_common()?;
    Ok(post("/v1/parse", to_body(p)?))
}

/// `POST /v1/redact`.
///
/// # Errors
/// `invalid_request` for the input and shared field rules.
pub fn redact(p: &RedactParams) -> Result<RequestSpec, ApiError> {
    check_inputs(p.file.as_ref(), p.files.as_ref())?;
    p.check_common()?;
    Ok(post("/v1/redact", to_body(p)?))
}

/// `POST /v1/fill`.
///
/// # Errors
/// `invalid_request` when `template.id` is missing, when `values` and `files` are both or
/// neither present, or `values` is not an object, plus the shared field rules.
pub fn fill(p: &FillParams) -> Result<RequestSpec, ApiError> {
    match &p.template {
        Some(t) => validate::required_text("template.id", &t.id)?,
        None => {
            return Err(ApiError::validation(
                "invalid_request",
                "template",
                "is required",
            ))
        }
    }
    validate::exclusive("values", p.values.is_some(), "files", p.files.is_some())?;
    match (&p.values, &p.files) {
        (Some(v), None) if !v.is_object() => {
            return Err(ApiError::validation(
                "invalid_request",
                "values",
                "must be an object",
            ))
        }
        (None, Some(files)) => validate_files("files", files, 1, validate::MAX_VERB_FILES)?,
        (None, None) => {
            return Err(ApiError::validation(
                "invalid_request",
                "values",
                "exactly one of values or files is required",
            ))
        }
        _ => {}
    }
    p.check_common()?;
    Ok(post("/v1/fill", to_body(p)?))
}

/// `POST /v1/sign`.
///
/// # Errors
/// `invalid_request` when `file` is missing, `files` is given, or `signers` is empty or has a
/// signer without name or email, plus the shared field rules.
pub fn sign(p: &SignParams) -> Result<RequestSpec, ApiError> {
    if p.extra.contains_key("files") {
        return Err(ApiError::validation(
            "invalid_request",
            "files",
            "sign takes a single file",
        ));
    }
    check_inputs(p.file.as_ref(), None)?;
    let signers = p.signers.as_deref().unwrap_or(&[]);
    validate::count("signers", signers.len(), 1, usize::MAX)?;
    for (i, s) in signers.iter().enumerate() {
        validate::required_text(&format!("signers[{i}].name"), &s.name)?;
        validate::required_text(&format!("signers[{i}].email"), &s.email)?;
    }
    p.check_common()?;
    Ok(post("/v1/sign", to_body(p)?))
}

/// `POST /v1/pipeline`.
///
/// # Errors
/// `invalid_request` for `file` (the route takes `files[]`), the input rules, or when `steps` is empty or holds a step that is not
/// a non-empty object; an `extract` step's inline schema is checked like [`extract`]'s.
pub fn pipeline(p: &PipelineParams) -> Result<RequestSpec, ApiError> {
    // The spec's body of this multi-file verb is `files[]`; the service answers 400 to a single `file`.
    if p.file.is_some() {
        return Err(ApiError::validation(
            "invalid_request",
            "file",
            "pipeline takes files[] (one or more file references)",
        ));
    }
    check_inputs(None, p.files.as_ref())?;
    let steps = p.steps.as_deref().unwrap_or(&[]);
    validate::count("steps", steps.len(), 1, usize::MAX)?;
    for (i, step) in steps.iter().enumerate() {
        let path = format!("steps[{i}]");
        match step {
            Value::Object(map) if !map.is_empty() => {
                if let Some(schema) = map.get("extract").and_then(|c| c.get("schema")) {
                    validate::schema_at(schema, &format!("{path}.extract.schema"))?;
                }
            }
            _ => {
                return Err(ApiError::validation(
                    "invalid_request",
                    &path,
                    "must be an object keyed by a capability name",
                ))
            }
        }
    }
    p.check_common()?;
    Ok(post("/v1/pipeline", to_body(p)?))
}
