//! A private tracefs instance for one run: `instances/schedlab-<pid>-<n>` with its own ring
//! buffer, the `mono` trace clock and only the sched events enabled. The global buffer and
//! every other instance are left alone; the instance (and a tracefs mount we made) is
//! removed when the session is dropped.

use crate::ringbuf::{parse_page, Decoder, Format, RawEvent, EVENTS};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Per-CPU ring buffer size of the instance. A context switch record is ~70 bytes, so this
/// holds ~60k events per CPU between two reads (the controller reads every 20 ms).
pub const BUFFER_KB: u64 = 4096;

/// Why tracing is not available (the run then reports procfs figures only).
#[derive(Clone, Debug)]
pub struct Unavailable(pub String);

pub struct TraceSession {
    instance: PathBuf,
    /// Where we mounted tracefs ourselves (unmounted on drop), if it was not mounted.
    our_mount: Option<PathBuf>,
    cpus: Vec<File>,
    decoder: Decoder,
    data_offset: usize,
    page: Vec<u8>,
    pub records: u64,
    /// Pages that reported events lost to a full buffer.
    pub missed_pages: u64,
}

/// Prefix of the private mount a run makes when tracefs is not mounted.
const PRIVATE_MOUNT: &str = "schedlab-tracefs-";

/// The pid in a private mount's directory name.
fn private_mount_pid(dir: &Path) -> Option<u32> {
    dir.file_name()?.to_str()?.strip_prefix(PRIVATE_MOUNT)?.parse().ok()
}

/// tracefs mount points in `/proc/mounts`.
fn tracefs_mounts() -> Vec<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, dir, kind) = (f.next()?, f.next()?, f.next()?);
            (kind == "tracefs").then(|| PathBuf::from(dir))
        })
        .collect()
}

/// A tracefs mount that outlives this run: not another run's private mount (which goes
/// away when that run ends). Private mounts of runs that were killed are removed here.
fn tracefs_mount() -> Option<PathBuf> {
    let mut found = None;
    for dir in tracefs_mounts() {
        match private_mount_pid(&dir) {
            Some(pid) if !Path::new(&format!("/proc/{pid}")).exists() => {
                let _ = nix::mount::umount2(&dir, nix::mount::MntFlags::MNT_DETACH);
                let _ = std::fs::remove_dir(&dir);
            }
            Some(_) => {}
            None => found = found.or(Some(dir)),
        }
    }
    found
}

/// Mounts tracefs on a private directory (not on `/sys/kernel/tracing`, which others may
/// use), so unmounting it later changes nothing anyone else sees.
fn mount_private() -> Result<PathBuf, Unavailable> {
    let dir = std::env::temp_dir().join(format!("{PRIVATE_MOUNT}{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Unavailable(format!("{}: {e}", dir.display())))?;
    nix::mount::mount(Some("nodev"), &dir, Some("tracefs"), nix::mount::MsFlags::empty(), None::<&str>).map_err(
        |e| {
            let _ = std::fs::remove_dir(&dir);
            Unavailable(format!("tracefs is not mounted and mounting it failed ({e}); run as root or mount it"))
        },
    )?;
    Ok(dir)
}

fn write(path: &Path, value: &str) -> Result<(), Unavailable> {
    std::fs::write(path, value).map_err(|e| Unavailable(format!("writing `{value}` to {}: {e}", path.display())))
}

fn read(path: &Path) -> Result<String, Unavailable> {
    std::fs::read_to_string(path).map_err(|e| Unavailable(format!("{}: {e}", path.display())))
}

/// Instances left by runs that were killed (SIGKILL cannot be caught): named after a pid
/// that no longer exists.
fn remove_stale(instances: &Path) {
    let Ok(rd) = std::fs::read_dir(instances) else { return };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix("schedlab-").and_then(|r| r.split('-').next()) else { continue };
        if pid.parse::<u32>().is_ok() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

static INSTANCE_SEQ: AtomicU64 = AtomicU64::new(0);

impl TraceSession {
    /// Creates and enables the instance. Events are recorded from now on.
    pub fn open(nr_cpus: usize) -> Result<TraceSession, Unavailable> {
        let (root, our_mount) = match tracefs_mount() {
            Some(r) => (r, None),
            None => {
                let m = mount_private()?;
                (m.clone(), Some(m))
            }
        };
        let instances = root.join("instances");
        remove_stale(&instances);
        let n = INSTANCE_SEQ.fetch_add(1, Ordering::SeqCst);
        let instance = instances.join(format!("schedlab-{}-{n}", std::process::id()));
        let mut s = TraceSession {
            instance: instance.clone(),
            our_mount,
            cpus: Vec::new(),
            decoder: Decoder::default(),
            data_offset: 16,
            page: Vec::new(),
            records: 0,
            missed_pages: 0,
        };
        std::fs::create_dir(&instance)
            .map_err(|e| Unavailable(format!("creating tracing instance {}: {e}", instance.display())))?;
        s.configure(&root, nr_cpus)?;
        Ok(s)
    }

    fn configure(&mut self, root: &Path, nr_cpus: usize) -> Result<(), Unavailable> {
        let inst = self.instance.clone();
        write(&inst.join("tracing_on"), "0")?;
        write(&inst.join("buffer_size_kb"), &BUFFER_KB.to_string())?;
        write(&inst.join("trace_clock"), "mono")?;
        let header = read(&root.join("events/header_page"))?;
        self.data_offset = header
            .lines()
            .find(|l| l.contains(" data;"))
            .and_then(|l| l.split("offset:").nth(1))
            .and_then(|v| v.split(';').next())
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(16);
        let sub_kb: usize = std::fs::read_to_string(inst.join("buffer_subbuf_size_kb"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(4);
        self.page = vec![0; sub_kb.max(4) * 1024];
        for ev in EVENTS {
            let dir = inst.join("events/sched").join(ev);
            let f = Format::parse(&read(&dir.join("format"))?).map_err(|m| Unavailable(format!("{ev}: {m}")))?;
            self.decoder.add(ev, f).map_err(Unavailable)?;
            write(&dir.join("enable"), "1")?;
        }
        for cpu in 0..nr_cpus {
            let p = inst.join(format!("per_cpu/cpu{cpu}/trace_pipe_raw"));
            let f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&p)
                .map_err(|e| Unavailable(format!("{}: {e}", p.display())))?;
            self.cpus.push(f);
        }
        write(&inst.join("tracing_on"), "1")
    }

    /// Reads every page available now from every CPU's buffer.
    pub fn read_available(&mut self, out: &mut Vec<RawEvent>) {
        for cpu in 0..self.cpus.len() {
            loop {
                let n = match self.cpus[cpu].read(&mut self.page) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let st = parse_page(&self.page[..n], cpu, self.data_offset, &self.decoder, out);
                self.records += st.records;
                self.missed_pages += u64::from(st.missed);
            }
        }
    }

    /// Stops recording (what is in the buffers can still be read).
    pub fn stop(&self) {
        let _ = std::fs::write(self.instance.join("tracing_on"), "0");
    }

    /// Entries the kernel overwrote or dropped, summed over CPUs (`per_cpu/cpuN/stats`).
    pub fn overruns(&self) -> u64 {
        (0..self.cpus.len())
            .filter_map(|c| std::fs::read_to_string(self.instance.join(format!("per_cpu/cpu{c}/stats"))).ok())
            .flat_map(|s| {
                s.lines()
                    .filter_map(|l| l.strip_prefix("overrun:").or_else(|| l.strip_prefix("dropped events:")))
                    .filter_map(|v| v.trim().parse::<u64>().ok())
                    .collect::<Vec<_>>()
            })
            .sum()
    }

    pub fn instance(&self) -> &Path {
        &self.instance
    }
}

impl Drop for TraceSession {
    fn drop(&mut self) {
        self.stop();
        self.cpus.clear();
        // Removing the instance directory frees its buffers and event settings.
        let _ = std::fs::remove_dir(&self.instance);
        if let Some(m) = self.our_mount.take() {
            let _ = nix::mount::umount2(&m, nix::mount::MntFlags::MNT_DETACH);
            let _ = std::fs::remove_dir(&m);
        }
    }
}
