//! The six capability verbs (plus extract batch): one POST each, `wait` 0..120 (server default
//! 60), a 202 with the run handle when not finished in time. Fields the spec does not list are
//! passed through from `extra` untouched (the spec says complete field lists are not shown).

use super::common::{
    validate_file_value, validate_file_values, validate_webhook_value, FileRef, WebhookRef,
    FILE_REF, FILE_REFS, WEBHOOK_REF,
};
use super::error::ApiError;
use super::params::{Field, Fields, Kind, Params, Table};
use super::request::{Method, RequestSpec};
use super::validate;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Fields every verb shares, declared in each params struct.
/// Also the struct's table ([`Fields`]): each field with its JSON kind, the shared ones, and other fields kept.
macro_rules! verb_params {
    ($(#[$meta:meta])* $name:ident { $($(#[$fmeta:meta])* $field:ident : $ty:ty = $kind:expr,)* }) => {
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

        impl Fields for $name {
            const TABLE: &'static Table = &Table {
                fields: &[
                    $(Field::opt(stringify!($field), $kind),)*
                    Field::opt("metadata", Kind::Any),
                    Field::opt("webhook", Kind::Object(&WEBHOOK_REF)),
                    Field::opt("ttl", Kind::Uint),
                ],
                keep_others: true,
            };
        }
    };
}

verb_params! {
    /// Body of `POST /v1/extract`.
    ExtractParams {
        /// One document.
        file: FileRef = Kind::Object(&FILE_REF),
        /// Several documents (up to 100).
        files: Vec<FileRef> = FILE_REFS,
        /// JSON schema of the result (dialect checked before sending).
        schema: Value = Kind::Any,
        /// Plain-language description of what to extract (not with `schema` or `action`).
        hints: String = Kind::Str,
        /// Saved action id or slug.
        action: String = Kind::Str,
        /// Ground each value in the document.
        citations: bool = Kind::Bool,
        /// Extra instructions.
        instructions: String = Kind::Str,
        /// `per_document`, `across_documents`, `rows_per_document`.
        unit: String = Kind::Str,
    }
}

verb_params! {
    /// Body of `POST /v1/extract/batch` (always 202; `idempotency-key` is ignored by the service).
    ExtractBatchParams {
        /// Saved action (required).
        action: String = Kind::Str,
        /// Documents, 1 to 100.
        files: Vec<FileRef> = FILE_REFS,
        /// Citations on or off.
        citations: bool = Kind::Bool,
        /// Rejected: batches use a saved action.
        schema: Value = Kind::Any,
        /// Rejected: batches use a saved action.
        hints: Value = Kind::Any,
    }
}

verb_params! {
    /// Body of `POST /v1/parse`.
    ParseParams {
        /// One document.
        file: FileRef = Kind::Object(&FILE_REF),
        /// Several documents.
        files: Vec<FileRef> = FILE_REFS,
    }
}

verb_params! {
    /// Body of `POST /v1/redact`.
    RedactParams {
        /// One document.
        file: FileRef = Kind::Object(&FILE_REF),
        /// Several documents.
        files: Vec<FileRef> = FILE_REFS,
        /// Categories of personal data.
        categories: Vec<String> = Kind::List(&Kind::Str),
        /// Redaction mode.
        mode: String = Kind::Str,
        /// Saved action.
        action: String = Kind::Str,
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
        template: TemplateRef = Kind::Object(&TEMPLATE_REF),
        /// Deterministic values.
        values: Value = Kind::Any,
        /// Sources to draft the values from.
        files: Vec<FileRef> = FILE_REFS,
        /// Output option.
        output: String = Kind::Str,
        /// Review option.
        review: String = Kind::Str,
        /// Saved action.
        action: String = Kind::Str,
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
        file: FileRef = Kind::Object(&FILE_REF),
        /// Signers, at least one.
        signers: Vec<Signer> = Kind::List(&Kind::Object(&SIGNER)),
        /// Saved sign action.
        action: String = Kind::Str,
    }
}

verb_params! {
    /// Body of `POST /v1/pipeline`: several capabilities over one file set, in parallel.
    PipelineParams {
        /// One document.
        file: FileRef = Kind::Object(&FILE_REF),
        /// Documents.
        files: Vec<FileRef> = FILE_REFS,
        /// Steps, each an object keyed by a capability name holding its config.
        steps: Vec<Value> = Kind::List(&Kind::Any),
    }
}

/// The table of a [`TemplateRef`].
const TEMPLATE_REF: Table = Table {
    fields: &[Field::req("id", Kind::Str)],
    keep_others: false,
};

/// The table of a [`Signer`].
const SIGNER: Table = Table {
    fields: &[
        Field::req("name", Kind::Str),
        Field::req("email", Kind::Str),
    ],
    keep_others: false,
};

/// `metadata`, `webhook` and `ttl`, which every verb has.
fn check_common<T>(p: &Params<T>) -> Result<(), ApiError> {
    if let Some(m) = p.get("metadata") {
        validate::metadata(m)?;
    }
    if let Some(w) = p.get("webhook") {
        validate_webhook_value(w)?;
    }
    if let Some(t) = p.get("ttl").and_then(Value::as_u64) {
        validate::ttl(t)?;
    }
    Ok(())
}

/// `file` XOR `files`, one of them present, files 1..=100.
fn check_inputs(file: Option<&Value>, files: Option<&[Value]>) -> Result<(), ApiError> {
    validate::exclusive("file", file.is_some(), "files", files.is_some())?;
    match (file, files) {
        (Some(f), None) => validate_file_value(f, "file"),
        (None, Some(list)) => validate_file_values("files", list, 1, validate::MAX_VERB_FILES),
        _ => Err(ApiError::validation(
            "invalid_request",
            "file",
            "a file (or files) is required",
        )),
    }
}

/// A verb's run creation (the service dedupes its `idempotency-key`), its body the params.
fn post<T>(path: &str, p: Params<T>) -> RequestSpec {
    p.into_body(
        RequestSpec::api(Method::Post, path.to_owned())
            .with_wait(None)
            .run_creation(),
    )
}

/// `POST /v1/extract`.
///
/// # Errors
/// As [`extract_params`].
pub fn extract(p: &ExtractParams) -> Result<RequestSpec, ApiError> {
    extract_params(Params::from_typed(p)?)
}

/// `POST /v1/extract` of checked params.
///
/// # Errors
/// `invalid_request` for `file` with `files`, neither, more than 100 files, `schema` with
/// `action`, `hints` with either, bad metadata/webhook/ttl; `invalid_schema` or
/// `schema_too_large` for a schema outside the dialect.
pub fn extract_params(p: Params<ExtractParams>) -> Result<RequestSpec, ApiError> {
    check_inputs(p.get("file"), p.list("files"))?;
    validate::exclusive("schema", p.has("schema"), "action", p.has("action"))?;
    validate::exclusive("hints", p.has("hints"), "schema", p.has("schema"))?;
    validate::exclusive("hints", p.has("hints"), "action", p.has("action"))?;
    p.schema_at(&["schema"], "schema")?;
    check_common(&p)?;
    Ok(post("/v1/extract", p))
}

/// `POST /v1/extract/batch`.
///
/// # Errors
/// As [`extract_batch_params`].
pub fn extract_batch(p: &ExtractBatchParams) -> Result<RequestSpec, ApiError> {
    extract_batch_params(Params::from_typed(p)?)
}

/// `POST /v1/extract/batch` of checked params.
///
/// # Errors
/// `invalid_request` when `action` is missing, `schema` or `hints` is present, or `files` is not
/// 1 to 100 valid references, plus the shared field rules.
pub fn extract_batch_params(p: Params<ExtractBatchParams>) -> Result<RequestSpec, ApiError> {
    if p.has("schema") || p.has("hints") {
        let field = if p.has("schema") { "schema" } else { "hints" };
        return Err(ApiError::validation(
            "invalid_request",
            field,
            "is not accepted by extract batch; use a saved action",
        ));
    }
    validate::required_text("action", p.str("action").unwrap_or(""))?;
    match p.list("files") {
        Some(files) => validate_file_values("files", files, 1, validate::MAX_VERB_FILES)?,
        None => {
            return Err(ApiError::validation(
                "invalid_request",
                "files",
                "is required",
            ))
        }
    }
    check_common(&p)?;
    // Extract batch ignores `idempotency-key` (spec): not a deduped run creation.
    let mut spec = post("/v1/extract/batch", p);
    spec.retry = super::request::RetryClass::NotReplaySafe;
    Ok(spec)
}

/// `POST /v1/parse`.
///
/// # Errors
/// As [`parse_params`].
pub fn parse(p: &ParseParams) -> Result<RequestSpec, ApiError> {
    parse_params(Params::from_typed(p)?)
}

/// `POST /v1/parse` of checked params.
///
/// # Errors
/// `invalid_request` for the input and shared field rules.
pub fn parse_params(p: Params<ParseParams>) -> Result<RequestSpec, ApiError> {
    check_inputs(p.get("file"), p.list("files"))?;
    check_common(&p)?;
    Ok(post("/v1/parse", p))
}

/// `POST /v1/redact`.
///
/// # Errors
/// As [`redact_params`].
pub fn redact(p: &RedactParams) -> Result<RequestSpec, ApiError> {
    redact_params(Params::from_typed(p)?)
}

/// `POST /v1/redact` of checked params.
///
/// # Errors
/// `invalid_request` for the input and shared field rules.
pub fn redact_params(p: Params<RedactParams>) -> Result<RequestSpec, ApiError> {
    check_inputs(p.get("file"), p.list("files"))?;
    check_common(&p)?;
    Ok(post("/v1/redact", p))
}

/// `POST /v1/fill`.
///
/// # Errors
/// As [`fill_params`].
pub fn fill(p: &FillParams) -> Result<RequestSpec, ApiError> {
    fill_params(Params::from_typed(p)?)
}

/// `POST /v1/fill` of checked params.
///
/// # Errors
/// `invalid_request` when `template.id` is missing, when `values` and `files` are both or
/// neither present, or `values` is not an object, plus the shared field rules.
pub fn fill_params(p: Params<FillParams>) -> Result<RequestSpec, ApiError> {
    match p.get("template") {
        Some(t) => validate::required_text(
            "template.id",
            t.get("id").and_then(Value::as_str).unwrap_or(""),
        )?,
        None => {
            return Err(ApiError::validation(
                "invalid_request",
                "template",
                "is required",
            ))
        }
    }
    validate::exclusive("values", p.has("values"), "files", p.has("files"))?;
    match (p.get("values"), p.list("files")) {
        (Some(v), None) if !v.is_object() => {
            return Err(ApiError::validation(
                "invalid_request",
                "values",
                "must be an object",
            ))
        }
        (None, Some(files)) => validate_file_values("files", files, 1, validate::MAX_VERB_FILES)?,
        (None, None) => {
            return Err(ApiError::validation(
                "invalid_request",
                "values",
                "exactly one of values or files is required",
            ))
        }
        _ => {}
    }
    check_common(&p)?;
    Ok(post("/v1/fill", p))
}

/// `POST /v1/sign`.
///
/// # Errors
/// As [`sign_params`].
pub fn sign(p: &SignParams) -> Result<RequestSpec, ApiError> {
    sign_params(Params::from_typed(p)?)
}

/// `POST /v1/sign` of checked params.
///
/// # Errors
/// `invalid_request` when `file` is missing, `files` is given, or `signers` is empty or has a
/// signer without name or email, plus the shared field rules.
pub fn sign_params(p: Params<SignParams>) -> Result<RequestSpec, ApiError> {
    if p.has("files") {
        return Err(ApiError::validation(
            "invalid_request",
            "files",
            "sign takes a single file",
        ));
    }
    check_inputs(p.get("file"), None)?;
    let signers = p.list("signers").unwrap_or(&[]);
    validate::count("signers", signers.len(), 1, usize::MAX)?;
    for (i, s) in signers.iter().enumerate() {
        let text = |name: &str| s.get(name).and_then(Value::as_str).unwrap_or("");
        validate::required_text(&format!("signers[{i}].name"), text("name"))?;
        validate::required_text(&format!("signers[{i}].email"), text("email"))?;
    }
    check_common(&p)?;
    Ok(post("/v1/sign", p))
}

/// `POST /v1/pipeline`.
///
/// # Errors
/// As [`pipeline_params`].
pub fn pipeline(p: &PipelineParams) -> Result<RequestSpec, ApiError> {
    pipeline_params(Params::from_typed(p)?)
}

/// `POST /v1/pipeline` of checked params.
///
/// # Errors
/// `invalid_request` for `file` (the route takes `files[]`), the input rules, or when `steps` is empty or holds a step that is not
/// a non-empty object; an `extract` step's inline schema is checked like [`extract`]'s.
pub fn pipeline_params(p: Params<PipelineParams>) -> Result<RequestSpec, ApiError> {
    // The spec's body of this multi-file verb is `files[]`; the service answers 400 to a single `file`.
    if p.has("file") {
        return Err(ApiError::validation(
            "invalid_request",
            "file",
            "pipeline takes files[] (one or more file references)",
        ));
    }
    check_inputs(None, p.list("files"))?;
    let steps = p.list("steps").unwrap_or(&[]);
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
    check_common(&p)?;
    Ok(post("/v1/pipeline", p))
}
