//! `schedlab serve`: the browser playground (`docs/playground.md`) on 127.0.0.1.
//!
//! The playground is static files (the page from `web/` and the simulator compiled to
//! WebAssembly, built into `target/playground` by `scripts/build-playground.sh`); any web
//! server serves it. This one is for convenience: loopback only, `GET`/`HEAD` of the files
//! of one directory, nothing else. A page needs an `http://` origin rather than `file://`
//! because browsers refuse to fetch the `.wasm` and start Web Workers from files.
//!
//! Written on `std::net` (a dozen small files, one local client: a crate would bring a
//! thread pool or an async runtime for nothing). SIGINT/SIGTERM stop it.

use schedlab::{note, signals, CliError};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `schedlab serve` was asked.
pub struct Options {
    /// Port on 127.0.0.1 (0: any free one; the one taken is printed).
    pub port: u16,
    /// The built playground (default: `target/playground` beside this binary, else under
    /// the current directory).
    pub dir: Option<PathBuf>,
}

/// The file that must be there for a directory to be a built playground.
const MODULE: &str = "schedlab.wasm";
/// Longest request head read (a browser's is well under 8 KiB).
const MAX_HEAD: u64 = 16 << 10;

/// Serves the playground until a signal stops it.
pub fn run(o: &Options) -> Result<(), CliError> {
    let dir = playground_dir(o.dir.as_deref())?;
    let listener = TcpListener::bind(("127.0.0.1", o.port))
        .map_err(|e| CliError::input(format!("serve: cannot listen on 127.0.0.1:{}: {e}", o.port)))?;
    let addr = listener.local_addr().map_err(|e| CliError::input(format!("serve: {e}")))?;
    // Non-blocking accept, so a signal is noticed within a poll interval.
    listener.set_nonblocking(true).map_err(|e| CliError::input(format!("serve: {e}")))?;
    note!("serving the playground from {} at http://{addr}/ (Ctrl-C stops)", dir.display());
    while !signals::stop_requested() {
        match listener.accept() {
            Ok((stream, _)) => {
                // One thread a connection: a browser's idle preconnected socket must not hold
                // up the others. A client's failure (it went away, sent garbage) ends its
                // connection only.
                let dir = dir.clone();
                std::thread::spawn(move || answer(stream, &dir));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(CliError::input(format!("serve: accept: {e}"))),
        }
    }
    Ok(())
}

/// The built playground: `dir`, else the default places; an error says how to build it.
fn playground_dir(dir: Option<&Path>) -> Result<PathBuf, CliError> {
    let candidates: Vec<PathBuf> = match dir {
        Some(d) => vec![d.to_path_buf()],
        None => {
            let beside = std::env::current_exe().ok().and_then(|e| Some(e.parent()?.parent()?.join("playground")));
            beside.into_iter().chain([PathBuf::from("target/playground")]).collect()
        }
    };
    if let Some(d) = candidates.iter().find(|d| d.join(MODULE).is_file() && d.join("index.html").is_file()) {
        return Ok(d.clone());
    }
    let looked: Vec<String> = candidates.iter().map(|d| d.display().to_string()).collect();
    Err(CliError::input(format!(
        "serve: the playground is not built (no {MODULE} and index.html in {}): run scripts/build-playground.sh",
        looked.join(" or ")
    )))
}

/// Answers one request on `stream` with a file of `dir`, or an error status.
fn answer(stream: TcpStream, dir: &Path) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut reader = BufReader::new(std::io::Read::take(&stream, MAX_HEAD));
    let mut line = String::new();
    reader.read_line(&mut line)?;
    // The rest of the head is not needed; read it so the client sees a clean close.
    let mut header = String::new();
    while reader.read_line(&mut header)? > 2 {
        header.clear();
    }
    let mut out = &stream;
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if method != "GET" && method != "HEAD" {
        return respond(&mut out, "405 Method Not Allowed", "text/plain", b"GET or HEAD only\n", true);
    }
    let Some(path) = file_of(dir, target) else {
        return respond(&mut out, "404 Not Found", "text/plain", b"not found\n", true);
    };
    match std::fs::read(&path) {
        Ok(body) => respond(&mut out, "200 OK", content_type(&path), &body, method == "GET"),
        Err(_) => respond(&mut out, "404 Not Found", "text/plain", b"not found\n", true),
    }
}

/// The file a request target names inside `dir`: its path without query or fragment,
/// `/` meaning `index.html`; `None` for anything that could leave `dir`.
fn file_of(dir: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next()?.strip_prefix('/')?;
    let path = if path.is_empty() { "index.html" } else { path };
    let safe = path.split('/').all(|c| {
        !c.is_empty() && c != "." && c != ".." && c.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    });
    safe.then(|| dir.join(path)).filter(|p| p.is_file())
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

fn respond(out: &mut impl Write, status: &str, ty: &str, body: &[u8], with_body: bool) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {ty}\r\nContent-Length: {}\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if with_body {
        out.write_all(body)?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only plain names inside the directory are served; `/` is the page.
    #[test]
    fn requests_stay_inside_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.html"), "x").unwrap();
        std::fs::write(dir.path().join("app.js"), "x").unwrap();
        assert_eq!(file_of(dir.path(), "/"), Some(dir.path().join("index.html")));
        assert_eq!(file_of(dir.path(), "/app.js?v=1#x"), Some(dir.path().join("app.js")));
        for bad in ["/../etc/passwd", "/./app.js", "//app.js", "app.js", "/%2e%2e/x", "/missing.js", "/a\\b"] {
            assert_eq!(file_of(dir.path(), bad), None, "{bad}");
        }
    }

    #[test]
    fn an_unbuilt_playground_says_how_to_build_it() {
        let dir = tempfile::tempdir().unwrap();
        let e = playground_dir(Some(dir.path())).unwrap_err();
        assert!(e.message.contains("scripts/build-playground.sh"), "{e}");
    }
}
