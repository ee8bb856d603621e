//! `docauto-emulator-bench`: load check of the emulator on loopback.
//!
//! Starts an emulator in-process on 127.0.0.1:0 (rate limit lifted), then measures
//! 1. sustained requests per second of `GET /v1/agents` with C concurrent clients for N requests;
//! 2. creation of R agent runs (`POST /v1/agent-runs?wait=0`, the fully automatic agent) and the process's
//!    resident memory (VmRSS) before and after.
//!
//! Usage: `docauto-emulator-bench [--requests N] [--concurrency C] [--runs R]` (defaults 20000, 32, 10000).
//! Run it with `cargo run --release -p docauto-emulator --bin docauto-emulator-bench` for meaningful numbers.

use docauto_emulator::http_client::HttpClient;
use docauto_emulator::{serve, Config};
use std::time::{Duration, Instant};

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn arg(args: &[String], name: &str, default: usize) -> Result<usize, String> {
    match args.iter().position(|a| a == name) {
        None => Ok(default),
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{name} needs a number")),
    }
}

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("docauto-emulator-bench: {e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let requests = arg(&args, "--requests", 20_000)?;
    let concurrency = arg(&args, "--concurrency", 32)?.max(1);
    let runs = arg(&args, "--runs", 10_000)?;
    let cfg = Config::from_args(
        [
            "--addr",
            "127.0.0.1:0",
            "--rate-limit",
            "1000000000",
            "--time-scale",
            "0.001",
            "--key",
            "sk_bench:org_bench",
        ]
        .iter()
        .map(|s| s.to_string()),
    )?;
    let h = serve(cfg).await?;
    let base = h.base_url();
    let auth = [
        ("authorization", "Bearer sk_bench".to_string()),
        ("content-type", "application/json".to_string()),
    ];
    let client = HttpClient::default();
    let t = Duration::from_secs(30);

    // warm-up and one registered, ready file for the runs
    let up = client
        .send(
            hyper::Method::POST,
            &format!("{base}/v1/files"),
            &auth,
            r#"{"name":"bench.txt","mimeType":"text/plain"}"#.into(),
            t,
        )
        .await
        .map_err(|e| e.to_string())?;
    let v: serde_json::Value = serde_json::from_slice(&up.body).map_err(|e| e.to_string())?;
    let upload = v
        .get("uploadUrl")
        .and_then(|u| u.as_str())
        .ok_or("no uploadUrl")?
        .to_string();
    let file_id = v
        .get("id")
        .and_then(|u| u.as_str())
        .ok_or("no id")?
        .to_string();
    client
        .send(
            hyper::Method::PUT,
            &upload,
            &[("content-type", "text/plain".into())],
            "Total: 1".into(),
            t,
        )
        .await
        .map_err(|e| e.to_string())?;
    tokio::time::sleep(Duration::from_millis(50)).await;

    let start = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..concurrency {
        let per = requests / concurrency + usize::from(i < requests % concurrency);
        let (client, url, auth) = (client.clone(), format!("{base}/v1/agents"), auth.clone());
        tasks.push(tokio::spawn(async move {
            let mut ok = 0usize;
            for _ in 0..per {
                if let Ok(r) = client
                    .send(hyper::Method::GET, &url, &auth, Default::default(), t)
                    .await
                {
                    if r.status == 200 {
                        ok += 1;
                    }
                }
            }
            ok
        }));
    }
    let mut ok = 0;
    for task in tasks {
        ok += task.await.unwrap_or(0);
    }
    let secs = start.elapsed().as_secs_f64();
    println!("GET /v1/agents: {ok} ok of {requests} in {secs:.2} s = {:.0} requests/s ({concurrency} concurrent)", ok as f64 / secs);

    let rss_before = rss_kib();
    let start = Instant::now();
    let body = format!(
        r#"{{"agent":"agt_document_digest","files":[{{"id":"{file_id}"}}],"metadata":{{"bench":"1"}}}}"#
    );
    let mut tasks = Vec::new();
    for i in 0..concurrency {
        let per = runs / concurrency + usize::from(i < runs % concurrency);
        let (client, url, auth, body) = (
            client.clone(),
            format!("{base}/v1/agent-runs?wait=0"),
            auth.clone(),
            body.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut ok = 0usize;
            for _ in 0..per {
                if let Ok(r) = client
                    .send(hyper::Method::POST, &url, &auth, body.clone().into(), t)
                    .await
                {
                    if r.status == 200 || r.status == 202 {
                        ok += 1;
                    }
                }
            }
            ok
        }));
    }
    let mut created = 0;
    for task in tasks {
        created += task.await.unwrap_or(0);
    }
    let secs = start.elapsed().as_secs_f64();
    let rss_after = rss_kib();
    println!(
        "POST /v1/agent-runs: {created} runs in {secs:.2} s = {:.0} runs/s",
        created as f64 / secs
    );
    println!(
        "memory (VmRSS, whole process): {:.1} MiB before, {:.1} MiB after {created} runs ({:.2} KiB per run)",
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0,
        (rss_after.saturating_sub(rss_before)) as f64 / created.max(1) as f64
    );
    h.shutdown().await
}
