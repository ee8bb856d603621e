//! `docauto-emulator-bench`: load check of the emulator on loopback.
//!
//! Starts emulators in-process on 127.0.0.1:0 (rate limit lifted) and measures
//! 1. sustained requests per second of `GET /v1/agents` with C concurrent clients for N requests;
//! 2. agent-run creations per second (`POST /v1/agent-runs?wait=0`) without and with `--state` (snapshot + fsynced
//!    journal in a temporary folder), S runs each, and the resident memory after the first;
//! 3. a mixed workload over M capability runs (parse, ttl 60 s): per run a creation, a read and a `wait` long-poll,
//!    one run in ten delivering its events to a local webhook receiver; p50/p99 latency per kind; after every
//!    batch of 5 000 runs the emulator clock moves 25 h so the ttl sweep purges and then drops old runs, and the
//!    resident memory is sampled (it must level off: a plateau, not a climb).
//!
//! Usage: `docauto-emulator-bench [--requests N] [--concurrency C] [--runs S] [--mixed M]` (defaults 20000, 32,
//! 5000, 100000). Run it with `cargo run --release -p docauto-emulator --bin docauto-emulator-bench`.

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

fn pct(v: &mut [f64], p: usize) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let i = (v.len() * p / 100).min(v.len().saturating_sub(1));
    v.get(i).copied().unwrap_or(0.0)
}

const AUTH: [(&str, &str); 2] = [
    ("authorization", "Bearer sk_bench"),
    ("content-type", "application/json"),
];

fn auth() -> Vec<(&'static str, String)> {
    AUTH.iter().map(|(k, v)| (*k, v.to_string())).collect()
}

async fn start(extra: &[&str]) -> Result<docauto_emulator::Handle, String> {
    let mut args = vec![
        "--addr",
        "127.0.0.1:0",
        "--rate-limit",
        "1000000000",
        "--time-scale",
        "0.001",
        "--key",
        "sk_bench:org_bench",
    ];
    args.extend_from_slice(extra);
    serve(Config::from_args(args.iter().map(|s| s.to_string()))?).await
}

/// Registers a small ready text file; returns its id.
async fn ready_file(client: &HttpClient, base: &str) -> Result<String, String> {
    let t = Duration::from_secs(30);
    let up = client
        .send(
            hyper::Method::POST,
            &format!("{base}/v1/files"),
            &auth(),
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
            "Invoice Number: 1\nTotal: 1\n".into(),
            t,
        )
        .await
        .map_err(|e| e.to_string())?;
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok(file_id)
}

/// Creates `runs` agent runs with `concurrency` clients; returns (created, seconds).
async fn create_runs(
    client: &HttpClient,
    base: &str,
    file_id: &str,
    runs: usize,
    concurrency: usize,
) -> (usize, f64) {
    let t = Duration::from_secs(30);
    let start = Instant::now();
    let body = format!(
        r#"{{"agent":"agt_document_digest","files":[{{"id":"{file_id}"}}],"metadata":{{"bench":"1"}}}}"#
    );
    let mut tasks = Vec::new();
    for i in 0..concurrency {
        let per = runs / concurrency + usize::from(i < runs % concurrency);
        let (client, url, body) = (
            client.clone(),
            format!("{base}/v1/agent-runs?wait=0"),
            body.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut ok = 0usize;
            for _ in 0..per {
                if let Ok(r) = client
                    .send(hyper::Method::POST, &url, &auth(), body.clone().into(), t)
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
    (created, start.elapsed().as_secs_f64())
}

/// A loopback webhook receiver answering 200; returns its URL and the count of deliveries.
async fn receiver() -> Result<(String, std::sync::Arc<std::sync::atomic::AtomicUsize>), String> {
    let n = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let n2 = n.clone();
    let app = axum::Router::new().fallback(move || {
        let n = n2.clone();
        async move {
            n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            axum::http::StatusCode::OK
        }
    });
    let l = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let addr = l.local_addr().map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    Ok((format!("http://{addr}/hook"), n))
}

/// The mixed workload (see the module doc).
async fn mixed(client: &HttpClient, total: usize, concurrency: usize) -> Result<(), String> {
    let t = Duration::from_secs(30);
    let h = start(&["--control", "--allow-http-webhooks"]).await?;
    let base = h.base_url();
    let file_id = ready_file(client, &base).await?;
    let (hook, hits) = receiver().await?;
    let e = client
        .send(
            hyper::Method::POST,
            &format!("{base}/v1/webhooks"),
            &auth(),
            format!(r#"{{"url":"{hook}"}}"#).into(),
            t,
        )
        .await
        .map_err(|e| e.to_string())?;
    let ev: serde_json::Value = serde_json::from_slice(&e.body).map_err(|e| e.to_string())?;
    let endpoint = ev
        .get("id")
        .and_then(|v| v.as_str())
        .ok_or("no endpoint id")?
        .to_string();
    let batch = 5_000.min(total.max(1));
    let mut lat: [Vec<f64>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut rss = Vec::new();
    let mut entries = Vec::new();
    let mut last_sizes = Vec::new();
    let mut done = 0usize;
    let start_all = Instant::now();
    while done < total {
        let n = batch.min(total - done);
        let mut tasks = Vec::new();
        for i in 0..concurrency {
            let per = n / concurrency + usize::from(i < n % concurrency);
            let (client, base, file_id, endpoint) = (
                client.clone(),
                base.clone(),
                file_id.clone(),
                endpoint.clone(),
            );
            tasks.push(tokio::spawn(async move {
                let mut l: [Vec<f64>; 3] = [Vec::new(), Vec::new(), Vec::new()];
                for k in 0..per {
                    let hook = if (i + k) % 10 == 0 {
                        format!(r#","webhook":{{"id":"{endpoint}"}}"#)
                    } else {
                        String::new()
                    };
                    let body = format!(r#"{{"file":{{"id":"{file_id}"}},"ttl":60{hook}}}"#);
                    let t0 = Instant::now();
                    let Ok(r) = client
                        .send(
                            hyper::Method::POST,
                            &format!("{base}/v1/parse?wait=0"),
                            &auth(),
                            body.into(),
                            t,
                        )
                        .await
                    else {
                        continue;
                    };
                    l[0].push(t0.elapsed().as_secs_f64() * 1000.0);
                    let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
                    let Some(id) = v.get("id").and_then(|x| x.as_str()) else {
                        continue;
                    };
                    let t1 = Instant::now();
                    let _ = client
                        .send(
                            hyper::Method::GET,
                            &format!("{base}/v1/runs/{id}"),
                            &auth(),
                            Default::default(),
                            t,
                        )
                        .await;
                    l[1].push(t1.elapsed().as_secs_f64() * 1000.0);
                    let t2 = Instant::now();
                    let _ = client
                        .send(
                            hyper::Method::GET,
                            &format!("{base}/v1/runs/{id}?wait=1"),
                            &auth(),
                            Default::default(),
                            t,
                        )
                        .await;
                    l[2].push(t2.elapsed().as_secs_f64() * 1000.0);
                }
                l
            }));
        }
        for task in tasks {
            if let Ok(l) = task.await {
                for (all, mine) in lat.iter_mut().zip(l) {
                    all.extend(mine);
                }
            }
        }
        done += n;
        // 25 h later: this batch's ttl passed (purged by the sweep), the previous batch's grace ended (dropped)
        let _ = client
            .send(
                hyper::Method::POST,
                &format!("{base}/__emulator/clock/advance"),
                &[("content-type", "application/json".into())],
                r#"{"seconds":90000}"#.into(),
                t,
            )
            .await;
        tokio::time::sleep(Duration::from_millis(
            docauto_emulator::runs::SWEEP_MS * 2 + 200,
        ))
        .await;
        rss.push(rss_kib());
        let sizes = h.app.state.lock().map(|s| s.sizes()).unwrap_or_default();
        entries.push(sizes.iter().map(|(_, n)| n).sum::<usize>());
        last_sizes = sizes;
    }
    let secs = start_all.elapsed().as_secs_f64();
    let held = h.app.state.lock().map(|s| s.runs.len()).unwrap_or(0);
    let ops = lat.iter().map(Vec::len).sum::<usize>();
    println!(
        "mixed: {done} capability runs, {ops} requests in {secs:.1} s = {:.0} requests/s ({concurrency} concurrent); {} webhook deliveries received",
        ops as f64 / secs,
        hits.load(std::sync::atomic::Ordering::Relaxed)
    );
    for (name, v) in [
        "POST /v1/parse",
        "GET /v1/runs/:id",
        "GET /v1/runs/:id?wait=1",
    ]
    .iter()
    .zip(lat.iter_mut())
    {
        let (p50, p99) = (pct(v, 50), pct(v, 99));
        println!(
            "  {name}: p50 {p50:.2} ms, p99 {p99:.2} ms ({} calls)",
            v.len()
        );
    }
    let series: Vec<String> = rss
        .iter()
        .map(|k| format!("{:.0}", *k as f64 / 1024.0))
        .collect();
    println!(
        "  memory (VmRSS MiB) after each batch of {batch}: {}; runs still held at the end: {held}",
        series.join(" ")
    );
    let counts: Vec<String> = entries.iter().map(usize::to_string).collect();
    let breakdown: Vec<String> = last_sizes
        .iter()
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    println!(
        "  entries held in the state after each batch (every collection, delivery rows and change marks): {}; at the end: {}",
        counts.join(" "),
        breakdown.join(", ")
    );
    h.shutdown().await
}

async fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let requests = arg(&args, "--requests", 20_000)?;
    let concurrency = arg(&args, "--concurrency", 32)?.max(1);
    let runs = arg(&args, "--runs", 5_000)?;
    let mixed_runs = arg(&args, "--mixed", 100_000)?;
    let h = start(&[]).await?;
    let base = h.base_url();
    let client = HttpClient::default();
    let t = Duration::from_secs(30);
    let file_id = ready_file(&client, &base).await?;

    let start_t = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..concurrency {
        let per = requests / concurrency + usize::from(i < requests % concurrency);
        let (client, url) = (client.clone(), format!("{base}/v1/agents"));
        tasks.push(tokio::spawn(async move {
            let mut ok = 0usize;
            for _ in 0..per {
                if let Ok(r) = client
                    .send(hyper::Method::GET, &url, &auth(), Default::default(), t)
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
    let secs = start_t.elapsed().as_secs_f64();
    println!("GET /v1/agents: {ok} ok of {requests} in {secs:.2} s = {:.0} requests/s ({concurrency} concurrent)", ok as f64 / secs);

    let rss_before = rss_kib();
    let (created, secs) = create_runs(&client, &base, &file_id, runs, concurrency).await;
    let rss_after = rss_kib();
    let mem_rate = created as f64 / secs;
    println!(
        "memory (VmRSS, whole process): {:.1} MiB before, {:.1} MiB after {created} agent runs ({:.2} KiB per run)",
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0,
        (rss_after.saturating_sub(rss_before)) as f64 / created.max(1) as f64
    );
    h.shutdown().await?;

    let dir = std::env::temp_dir().join(format!("docauto-emu-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let state = dir.join("state.json");
    let hs = start(&["--state", &state.to_string_lossy()]).await?;
    let fid = ready_file(&client, &hs.base_url()).await?;
    let (created_s, secs_s) = create_runs(&client, &hs.base_url(), &fid, runs, concurrency).await;
    hs.shutdown().await?;
    let journal_note = std::fs::metadata(&state).map(|m| m.len()).unwrap_or(0);
    let _ = std::fs::remove_dir_all(&dir);
    let disk_rate = created_s as f64 / secs_s;
    println!(
        "POST /v1/agent-runs: {mem_rate:.0} runs/s in memory ({created} runs), {disk_rate:.0} runs/s with --state ({created_s} runs, every answer after fdatasync; snapshot {:.1} MiB at stop), ratio {:.2}",
        journal_note as f64 / (1024.0 * 1024.0),
        disk_rate / mem_rate.max(1.0)
    );
    if mixed_runs > 0 {
        mixed(&client, mixed_runs, concurrency).await?;
    }
    Ok(())
}
