//! `docauto-emulator-bench`: load check of the emulator on loopback.
//!
//! Starts emulators in-process on 127.0.0.1:0 (rate limit lifted) and measures
//! 1. sustained requests per second of `GET /v1/agents` with C concurrent clients for N requests;
//! 2. agent-run creations per second (`POST /v1/agent-runs?wait=0`) without and with `--state` (snapshot + fsynced
//!    journal in a temporary folder), S runs each, and the resident memory after the first;
//! 3. a mixed workload over M capability runs (parse, ttl 60 s): per run a creation, a read and a `wait` long-poll;
//!    one run in ten delivers its events to a local webhook receiver, one in ten carries an `idempotency-key`, one
//!    in ten is deleted; p50/p99 latency per kind. After every batch of 5 000 runs the emulator clock moves 25 h so
//!    the ttl sweep purges and then drops old runs, and memory is sampled twice: the live heap (bytes allocated and
//!    not freed, counted by this binary's global allocator) and the resident set (VmRSS, which also holds what the
//!    allocator keeps after frees). The last line is a verdict computed from those samples: the memory levels off
//!    (a plateau) or it climbs.
//!
//! The process is both the emulator and its clients: latencies are kept in fixed-size histograms (not a growing
//! list) so the measuring side holds the same memory after every batch.
//!
//! Usage: `docauto-emulator-bench [--requests N] [--concurrency C] [--runs S] [--mixed M]` (defaults 20000, 32,
//! 5000, 100000). Run it with `cargo run --release -p docauto-emulator-bench`.

use docauto_emulator::host::HttpClient;
use docauto_emulator::{serve, Config};
use std::time::{Duration, Instant};

/// Counts the bytes allocated and not yet freed (the live heap), for the memory samples of the mixed workload.
#[global_allocator]
static HEAP: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// Latencies in a fixed number of log-linear buckets: exact below 64 us, then 32 buckets per power of two (at most
/// 3 % wide), so recording never allocates and a percentile is within 1.6 % of the exact one.
#[derive(Clone)]
struct Histogram {
    counts: Vec<u64>,
    n: u64,
}

const SUB_BITS: u32 = 5;
const LINEAR: u64 = 64;

impl Histogram {
    fn new() -> Histogram {
        Histogram {
            counts: vec![0; Histogram::index(u64::MAX) + 1],
            n: 0,
        }
    }

    fn index(us: u64) -> usize {
        if us < LINEAR {
            return us as usize;
        }
        let e = 63 - us.leading_zeros(); // >= 6
        let sub = (us >> (e - SUB_BITS)) & ((1 << SUB_BITS) - 1);
        (LINEAR + u64::from(e - 6) * (1 << SUB_BITS) + sub) as usize
    }

    /// The middle of bucket `i`, in microseconds.
    fn value(i: usize) -> f64 {
        let i = i as u64;
        if i < LINEAR {
            return i as f64;
        }
        let e = (i - LINEAR) / (1 << SUB_BITS) + 6;
        let sub = (i - LINEAR) % (1 << SUB_BITS);
        let width = 1u64 << (e - u64::from(SUB_BITS));
        ((1 << SUB_BITS) + sub) as f64 * width as f64 + width as f64 / 2.0
    }

    fn record(&mut self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        if let Some(c) = self.counts.get_mut(Histogram::index(us)) {
            *c += 1;
            self.n += 1;
        }
    }

    fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.n += other.n;
    }

    /// The `p`-th percentile in milliseconds (the sample at rank `n * p / 100`, 0-based).
    fn percentile_ms(&self, p: u64) -> f64 {
        let rank = (self.n * p / 100).min(self.n.saturating_sub(1)) + 1;
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Histogram::value(i) / 1000.0;
            }
        }
        0.0
    }
}

/// Whether a memory series levelled off, from its second half (the first half is warm-up): the last quarter's
/// mean against the third quarter's (`growth`), and the spread (max - min) of the second half over its mean.
struct Plateau {
    growth_pct: f64,
    spread_pct: f64,
    window: usize,
}

/// At most this much growth from the third to the last quarter of the batches, and this much spread over the
/// second half, is a plateau.
const PLATEAU_GROWTH_PCT: f64 = 2.0;
const PLATEAU_SPREAD_PCT: f64 = 5.0;

impl Plateau {
    fn of(series: &[u64]) -> Option<Plateau> {
        if series.len() < 8 {
            return None;
        }
        let tail = series.get(series.len() / 2..)?;
        let (q3, q4) = tail.split_at(tail.len() / 2);
        let mean = |v: &[u64]| v.iter().sum::<u64>() as f64 / v.len().max(1) as f64;
        let (lo, hi) = (tail.iter().min()?, tail.iter().max()?);
        Some(Plateau {
            growth_pct: (mean(q4) - mean(q3)) / mean(q3).max(1.0) * 100.0,
            spread_pct: (hi - lo) as f64 / mean(tail).max(1.0) * 100.0,
            window: tail.len(),
        })
    }

    fn flat(&self) -> bool {
        self.growth_pct <= PLATEAU_GROWTH_PCT && self.spread_pct <= PLATEAU_SPREAD_PCT
    }

    fn describe(&self) -> String {
        format!(
            "{} (last {} batches: spread {:.1} %, last quarter vs third {:+.1} %)",
            if self.flat() { "plateau" } else { "climbing" },
            self.window,
            self.spread_pct,
            self.growth_pct
        )
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1024.0 * 1024.0))
}

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

/// One client's share of a batch of the mixed workload: `per` runs, each created, read and long-polled; one in ten
/// with a webhook, one in ten with an idempotency key, one in ten deleted at the end.
async fn mixed_client(
    client: HttpClient,
    base: String,
    file_id: String,
    endpoint: String,
    tag: String,
    per: usize,
) -> [Histogram; 4] {
    let t = Duration::from_secs(30);
    let mut l = [
        Histogram::new(),
        Histogram::new(),
        Histogram::new(),
        Histogram::new(),
    ];
    for k in 0..per {
        let hook = if k % 10 == 0 {
            format!(r#","webhook":{{"id":"{endpoint}"}}"#)
        } else {
            String::new()
        };
        let body = format!(r#"{{"file":{{"id":"{file_id}"}},"ttl":60{hook}}}"#);
        let mut headers = auth();
        if k % 10 == 3 {
            headers.push(("idempotency-key", format!("{tag}-{k}")));
        }
        let t0 = Instant::now();
        let Ok(r) = client
            .send(
                hyper::Method::POST,
                &format!("{base}/v1/parse?wait=0"),
                &headers,
                body.into(),
                t,
            )
            .await
        else {
            continue;
        };
        let [create, read, wait, delete] = &mut l;
        create.record(t0.elapsed());
        let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
        let Some(id) = v.get("id").and_then(|x| x.as_str()) else {
            continue;
        };
        let url = format!("{base}/v1/runs/{id}");
        let t1 = Instant::now();
        let _ = client
            .send(hyper::Method::GET, &url, &auth(), Default::default(), t)
            .await;
        read.record(t1.elapsed());
        let t2 = Instant::now();
        let _ = client
            .send(
                hyper::Method::GET,
                &format!("{url}?wait=1"),
                &auth(),
                Default::default(),
                t,
            )
            .await;
        wait.record(t2.elapsed());
        if k % 10 == 6 {
            let t3 = Instant::now();
            let _ = client
                .send(hyper::Method::DELETE, &url, &auth(), Default::default(), t)
                .await;
            delete.record(t3.elapsed());
        }
    }
    l
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
    let mut lat = [
        Histogram::new(),
        Histogram::new(),
        Histogram::new(),
        Histogram::new(),
    ];
    let (mut rss, mut heap, mut entries) = (Vec::new(), Vec::new(), Vec::new());
    let mut last_sizes = Vec::new();
    let mut done = 0usize;
    let start_all = Instant::now();
    while done < total {
        let n = batch.min(total - done);
        let mut tasks = Vec::new();
        for i in 0..concurrency {
            let per = n / concurrency + usize::from(i < n % concurrency);
            tasks.push(tokio::spawn(mixed_client(
                client.clone(),
                base.clone(),
                file_id.clone(),
                endpoint.clone(),
                format!("b{done}c{i}"),
                per,
            )));
        }
        for task in tasks {
            if let Ok(l) = task.await {
                for (all, mine) in lat.iter_mut().zip(&l) {
                    all.merge(mine);
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
        rss.push(rss_kib() * 1024);
        heap.push(HEAP.allocated() as u64);
        let sizes = h.app.state.lock().map(|s| s.sizes()).unwrap_or_default();
        entries.push(sizes.iter().map(|(_, n)| n).sum::<usize>());
        last_sizes = sizes;
    }
    let secs = start_all.elapsed().as_secs_f64();
    let held = h.app.state.lock().map(|s| s.runs.len()).unwrap_or(0);
    let ops: u64 = lat.iter().map(|h| h.n).sum();
    println!(
        "mixed: {done} capability runs, {ops} requests in {secs:.1} s = {:.0} requests/s ({concurrency} concurrent); {} webhook deliveries received",
        ops as f64 / secs,
        hits.load(std::sync::atomic::Ordering::Relaxed)
    );
    for (name, v) in [
        "POST /v1/parse",
        "GET /v1/runs/:id",
        "GET /v1/runs/:id?wait=1",
        "DELETE /v1/runs/:id",
    ]
    .iter()
    .zip(lat.iter())
    {
        println!(
            "  {name}: p50 {:.2} ms, p99 {:.2} ms ({} calls)",
            v.percentile_ms(50),
            v.percentile_ms(99),
            v.n
        );
    }
    let series = |v: &[u64]| v.iter().map(|b| mib(*b)).collect::<Vec<_>>().join(" ");
    println!(
        "  live heap (MiB, allocated and not freed) after each batch of {batch}: {}",
        series(&heap)
    );
    println!(
        "  memory (VmRSS MiB) after each batch of {batch}: {}; runs still held at the end: {held}",
        series(&rss)
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
    h.shutdown().await?;
    match (Plateau::of(&heap), Plateau::of(&rss)) {
        (Some(hp), Some(rp)) => {
            println!(
                "  memory verdict: live heap {}; VmRSS {}",
                hp.describe(),
                rp.describe()
            );
            if !hp.flat() {
                return Err(format!(
                    "the live heap climbs over the mixed workload ({})",
                    hp.describe()
                ));
            }
        }
        _ => println!("  memory verdict: none (fewer than 8 batches; run --mixed 40000 or more)"),
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_percentiles_are_within_the_bucket_width() {
        let mut h = Histogram::new();
        // 1 us .. 100 ms, one sample each 1 us up to 10 ms then every 100 us
        let samples: Vec<u64> = (1..10_000).chain((10_000..100_000).step_by(100)).collect();
        for us in &samples {
            h.record(Duration::from_micros(*us));
        }
        let mut sorted = samples.clone();
        sorted.sort_unstable();
        for p in [50, 90, 99] {
            let exact =
                sorted[(sorted.len() * p as usize / 100).min(sorted.len() - 1)] as f64 / 1000.0;
            let got = h.percentile_ms(p);
            assert!(
                (got - exact).abs() <= exact * 0.032,
                "p{p}: {got} ms vs exact {exact} ms"
            );
        }
        assert_eq!(Histogram::new().percentile_ms(50), 0.0);
    }

    #[test]
    fn histogram_buckets_are_ordered_and_cover_every_value() {
        let mut last = 0;
        for us in (0..4096).chain([u64::MAX / 2, u64::MAX]) {
            let i = Histogram::index(us);
            assert!(i >= last && i < Histogram::new().counts.len());
            last = i;
        }
        for i in 64..1000 {
            assert!(Histogram::value(i) < Histogram::value(i + 1));
            assert_eq!(Histogram::index(Histogram::value(i) as u64), i);
        }
    }

    #[test]
    fn plateau_accepts_a_flat_series_and_flags_a_climb() {
        let mib = 1024 * 1024;
        let flat: Vec<u64> = (0..20)
            .map(|i| {
                if i < 3 {
                    30 * mib + i * 4 * mib
                } else {
                    40 * mib + (i % 3) * mib / 10
                }
            })
            .collect();
        assert!(Plateau::of(&flat).unwrap().flat());
        // the former reading: 0.5 MiB more after every batch of 5 000 runs
        let creep: Vec<u64> = (0..20).map(|i| 53 * mib + i * mib / 2).collect();
        let p = Plateau::of(&creep).unwrap();
        assert!(!p.flat(), "{}", p.describe());
        assert!(Plateau::of(&flat[..7]).is_none(), "too few batches");
    }
}
