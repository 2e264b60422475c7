//! The browser playground (docs/playground.md) in a real browser: `schedlab serve` serves
//! the built page (scripts/build-playground.sh, run by scripts/setup-test-deps.sh), headless
//! Chromium loads it, and the test drives it through the DevTools protocol (over
//! `--remote-debugging-pipe`: no WebSocket, no extra crate). The page's own steps
//! (`web/selftest.js`) work it through its DOM; the test compares what the page shows with
//! what the CLI prints for the same workload and seed:
//! - every built-in example's trace hash computed by the page's WebAssembly equals the CLI's,
//!   under eevdf and under every other scheduler in turn;
//! - an example run under two schedulers shows the CLI's per-task figures;
//! - the page's link reproduces the run (same trace hashes);
//! - a clicked wait shows the CLI's `schedlab explain --at` text for it;
//! - a run beyond the CLI's limits is refused up front with its message; a long run shows
//!   progress and is cancelled;
//! - an invalid workload shows the CLI's located error, its line marked.
//!
//! Screenshots go to `target/tmp/playground/`.

mod common;
use common::chromium;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");
/// Longest a DevTools call may take (a run of an example takes well under a second).
const TIMEOUT: Duration = Duration::from_secs(90);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Kills the child it holds (by its pid) when the test ends, passing or failing.
struct Killed(Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `schedlab serve --port 0` and the address it printed.
fn serve() -> (Killed, String) {
    let mut child =
        Command::new(BIN).args(["serve", "--port", "0"]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().expect("serve printed nothing").unwrap();
    let guard = Killed(child);
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("serve did not start (run scripts/build-playground.sh?): {first}"))
        .to_string();
    // Keep draining its stderr so it never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (guard, url)
}

/// Chromium driven over its DevTools pipe: requests on its fd 3, answers on its fd 4 (JSON
/// messages ended by NUL). A shell maps them onto the pipes of stdin and stdout.
struct Browser {
    _child: Killed,
    to: ChildStdin,
    from: Receiver<Value>,
    next: u64,
    session: String,
    _profile: tempfile::TempDir,
}

impl Browser {
    fn start() -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#"exec "$0" "$@" 3<&0 4>&1 </dev/null >/dev/null"#)
            .arg(chromium())
            .args(common::HEADLESS)
            .args(["--remote-debugging-pipe", "--window-size=1400,1800"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let to = child.stdin.take().unwrap();
        let mut out = child.stdout.take().unwrap();
        let (tx, from) = channel();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 1 << 16];
            while let Ok(n) = out.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
                while let Some(end) = buf.iter().position(|&b| b == 0) {
                    let msg: Vec<u8> = buf.drain(..=end).collect();
                    if let Ok(v) = serde_json::from_slice::<Value>(&msg[..end]) {
                        if tx.send(v).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let mut b = Browser { _child: Killed(child), to, from, next: 0, session: String::new(), _profile: profile };
        let target = b.call(None, "Target.createTarget", json!({ "url": "about:blank" }));
        let id = target["targetId"].as_str().unwrap().to_string();
        let attached = b.call(None, "Target.attachToTarget", json!({ "targetId": id, "flatten": true }));
        b.session = attached["sessionId"].as_str().unwrap().to_string();
        let s = Some(b.session.clone());
        b.call(
            s.as_deref(),
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": 1400, "height": 1800, "deviceScaleFactor": 1, "mobile": false }),
        );
        b
    }

    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            msg["sessionId"] = s.into();
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).unwrap();
        loop {
            let v = self.from.recv_timeout(TIMEOUT).unwrap_or_else(|_| panic!("no answer to {method}"));
            if v["id"].as_u64() == Some(id) {
                assert!(v.get("error").is_none(), "{method}: {}", v["error"]);
                return v["result"].clone();
            }
        }
    }

    /// Evaluates `expr` in the page, awaiting a promise; its value (JSON) or a panic with
    /// the page's exception.
    fn eval(&mut self, expr: &str) -> Value {
        let s = self.session.clone();
        let r = self.call(
            Some(&s),
            "Runtime.evaluate",
            json!({ "expression": expr, "awaitPromise": true, "returnByValue": true }),
        );
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {}", r["exceptionDetails"]);
        r["result"]["value"].clone()
    }

    fn open(&mut self, url: &str) {
        let s = self.session.clone();
        self.call(Some(&s), "Page.navigate", json!({ "url": url }));
        for _ in 0..200 {
            let s = self.session.clone();
            let r = self.call(
                Some(&s),
                "Runtime.evaluate",
                json!({ "expression": "typeof Selftest", "returnByValue": true }),
            );
            if r["result"]["value"] == "object" {
                self.eval("App.ready.then(() => true)");
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the page at {url} did not load");
    }

    fn screenshot(&mut self, name: &str) -> PathBuf {
        let s = self.session.clone();
        let r =
            self.call(Some(&s), "Page.captureScreenshot", json!({ "format": "png", "captureBeyondViewport": true }));
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("playground");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        use base64::Engine;
        let png = base64::engine::general_purpose::STANDARD.decode(r["data"].as_str().unwrap()).unwrap();
        assert!(png.len() > 10_000, "{name}: a {} B screenshot is no page", png.len());
        std::fs::write(&path, png).unwrap();
        path
    }
}

fn cli(args: &[&str], dir: &Path) -> std::process::Output {
    Command::new(BIN).args(args).current_dir(dir).output().unwrap()
}

fn cli_json(args: &[&str]) -> Value {
    let out = cli(args, &repo());
    assert!(out.status.success(), "schedlab {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The CLI's name of a page example (`rt-app/x` is `example:rt-app/x.json`, `study/x` the
/// study's file).
fn cli_workload(example: &str) -> String {
    if let Some(s) = example.strip_prefix("study/") {
        return format!("examples/studies/{s}.toml");
    }
    if example.starts_with("rt-app/") {
        return format!("example:{example}.json");
    }
    format!("example:{example}")
}

/// The page's trace hash of every example it offers equals the CLI's (seed 1): each under
/// eevdf and under one more scheduler, the registry's schedulers taken in turn, so every
/// policy runs in the browser's 32-bit WebAssembly at least a few times.
fn every_example_hashes_as_the_cli(b: &mut Browser) {
    let names: Vec<String> = serde_json::from_value(b.eval("App.catalog.examples.map((e) => e.name)")).unwrap();
    let scheds: Vec<String> = serde_json::from_value(b.eval("App.catalog.schedulers.map((s) => s.name)")).unwrap();
    assert!(names.len() >= 29 && scheds.len() >= 8, "{names:?} {scheds:?}");
    let others = scheds.iter().filter(|s| *s != "eevdf").cycle();
    let runs: Vec<(String, String)> = names
        .iter()
        .zip(others)
        .flat_map(|(n, other)| [(n.clone(), "eevdf".to_string()), (n.clone(), other.clone())])
        .collect();
    let asked: Vec<Value> = runs.iter().map(|(n, s)| json!({ "example": n, "sched": s, "seed": 1 })).collect();
    // The CLI's runs go on beside the page's.
    let cli = std::thread::spawn({
        let runs = runs.clone();
        move || {
            runs.iter()
                .map(|(n, s)| cli_json(&["run", &cli_workload(n), "--sched", s, "--seed", "1", "--format", "json"]))
                .collect::<Vec<Value>>()
        }
    });
    let page = b.eval(&format!("Selftest.hashes({})", Value::from(asked)));
    let cli = cli.join().unwrap();
    assert_eq!(page.as_array().map(Vec::len), Some(runs.len()), "{page}");
    for (p, c) in page.as_array().unwrap().iter().zip(&cli) {
        assert_eq!(p["error"], Value::Null, "{p}");
        assert_eq!(
            (&p["trace_hash"], &p["events"]),
            (&c["trace_hash"], &c["events"]),
            "{} {}",
            p["example"],
            p["sched"]
        );
    }
}

/// four-hogs under eevdf and cfs: the page's tables are the CLI's records, field by field.
fn two_schedulers_show_the_cli_tables(b: &mut Browser) -> Value {
    let shown = b.eval(r#"Selftest.runExample("four-hogs", ["eevdf", "cfs@4.9"], 3)"#);
    assert_eq!(shown["error"], Value::Null, "{shown}");
    assert_eq!(shown["chips"], json!(["eevdf", "cfs@4.9"]));
    let records =
        cli_json(&["compare", "example:four-hogs", "--sched", "eevdf,cfs@4.9", "--seed", "3", "--format", "json"]);
    for r in records.as_array().unwrap() {
        let sched = r["scheduler"]["name"].as_str().unwrap();
        assert_eq!(shown["summary"][sched]["trace_hash"], r["trace_hash"], "{sched}");
        let rows = &shown["tables"][sched];
        for t in r["tasks"].as_array().unwrap() {
            let row = &rows[t["name"].as_str().unwrap()];
            for key in [
                "tid",
                "nice",
                "runtime_ns",
                "wait_ns",
                "sleep_ns",
                "switches_voluntary",
                "switches_involuntary",
                "migrations",
                "wakeups",
            ] {
                assert_eq!(row[key], t[key], "{sched} {} {key}", t["name"]);
            }
            for (key, q) in [("lat_p50", "p50"), ("lat_p99", "p99"), ("lat_max", "max")] {
                assert_eq!(row[key], t["wakeup_latency_ns"][q], "{sched} {} {key}", t["name"]);
            }
        }
        assert_eq!(rows.as_object().unwrap().len(), r["tasks"].as_array().unwrap().len());
    }
    shown
}

/// The clicked wait's explanation is `schedlab explain --task T --at T`'s.
fn a_clicked_wait_is_explained_as_by_the_cli(b: &mut Browser) {
    let e = b.eval("Selftest.clickLongestWait()");
    assert_eq!(e["error"], Value::Null, "{e}");
    let (sched, task, at) = (e["sched"].as_str().unwrap(), e["task"].as_str().unwrap(), e["at_ns"].as_u64().unwrap());
    let text = e["text"].as_str().unwrap();
    assert!(!text.contains("no wait in the selection"), "the page's wait is not the explainer's: {e}");
    let at = format!("{at}ns");
    let out =
        cli(&["explain", "example:four-hogs", "--sched", sched, "--seed", "3", "--task", task, "--at", &at], &repo());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(text.trim_end(), String::from_utf8_lossy(&out.stdout).trim_end(), "{e}");
}

/// A run longer than the CLI's limit is refused before it starts, with the CLI's message;
/// a long run shows its progress and Cancel ends it.
fn limits_progress_and_cancel(b: &mut Browser) {
    let shown = b.eval(r#"Selftest.runWithDuration("100000s")"#);
    assert_eq!((&shown["shown"], &shown["started"]), (&json!(true), &json!(0)), "{shown}");
    let out = cli(&["run", "example:four-hogs", "--duration", "100000s"], &repo());
    assert_eq!(out.status.code(), Some(2));
    let shown_msg = shown["message"].as_str().unwrap();
    // The page names the scheduler whose check failed before the CLI's message.
    let msg = &shown_msg[shown_msg.find("limit exceeded: run time").unwrap_or_else(|| panic!("{shown_msg}"))..];
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(msg),
        "page: {msg}\nCLI: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = b.eval(r#"Selftest.cancelLongRun("3600s")"#);
    assert_eq!((&c["progressed"], &c["run_enabled"]), (&json!(true), &json!(true)), "{c}");
    let labels = c["labels"].as_array().unwrap();
    assert!(!labels.is_empty() && labels.iter().all(|l| l.as_str().unwrap().ends_with(": cancelled")), "{c}");
}

/// An invalid workload shows the CLI's error message, located, with its line marked.
fn an_invalid_workload_shows_its_located_error(b: &mut Browser) {
    let bad = "[[task]]\nname = \"t\"\nprogram = [ { run = \"5 parsecs\" } ]\n";
    let shown = b.eval(&format!("Selftest.typeInvalid({}, \"bad.toml\")", Value::from(bad)));
    assert_eq!(shown["shown"], true, "{shown}");
    assert_eq!(
        (shown["kind"].as_str(), shown["line"].as_u64(), shown["marked_line"].as_u64()),
        (Some("source"), Some(3), Some(3)),
        "{shown}"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.toml"), bad).unwrap();
    let out = cli(&["run", "bad.toml"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let msg = shown["message"].as_str().unwrap();
    assert!(msg.starts_with("bad.toml:3:"), "{msg}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(msg),
        "page: {msg}\nCLI: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_playground_runs_the_simulator_as_the_cli_does() {
    let (_server, url) = serve();
    let mut b = Browser::start();
    b.open(&format!("{url}index.html"));
    every_example_hashes_as_the_cli(&mut b);
    let shown = two_schedulers_show_the_cli_tables(&mut b);
    let shot = b.screenshot("run.png");
    a_clicked_wait_is_explained_as_by_the_cli(&mut b);
    b.screenshot("explain.png");
    // The link carries the workload and the choices: opened afresh, it runs the same.
    let link = b.eval("Selftest.link()");
    let link = link.as_str().unwrap();
    assert!(link.contains("index.html#z"), "{link}");
    // Another query string: a new document, not a jump within this one.
    b.open(&link.replacen("index.html#", "index.html?again#", 1));
    b.eval("App.lastRun.then(() => true)");
    assert_eq!(b.eval("Selftest.summary()"), shown["summary"], "the link did not reproduce the run");
    limits_progress_and_cancel(&mut b);
    an_invalid_workload_shows_its_located_error(&mut b);
    b.screenshot("error.png");
    eprintln!("screenshots in {}", shot.parent().unwrap().display());
}

/// Without a built playground `serve` exits with status 2 and says how to build it.
#[test]
fn serve_without_a_build_says_how_to_build_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = cli(&["serve", "--port", "0", "--dir", dir.path().to_str().unwrap()], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("scripts/build-playground.sh"));
}
