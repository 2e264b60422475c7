//! The topology read from this host's sysfs agrees with what the kernel says elsewhere
//! (robust facts only: counts and memberships, no timings).

use schedlab_calibrate::{shape, sysfs};
use std::path::Path;

#[test]
fn sysfs_topology_matches_this_host() {
    let t = sysfs::read_topology(Path::new("/sys/devices/system")).unwrap();
    let online = nix::unistd::sysconf(nix::unistd::SysconfVar::_NPROCESSORS_ONLN).unwrap().unwrap() as usize;
    assert_eq!(t.cpus.len(), online);
    for c in &t.cpus {
        assert!(c.smt.contains(c.cpu) && c.llc.contains(c.cpu), "CPU {}", c.cpu);
        assert!(c.smt.iter().all(|s| c.llc.contains(s)), "CPU {}: an SMT sibling outside its LLC", c.cpu);
    }
    // A regular host fits exactly; an irregular one is refused with a reason.
    match shape::regular_shape(&t) {
        Ok(s) => assert_eq!(s.nodes * s.llcs_per_node * s.cores_per_llc * s.threads_per_core, online),
        Err(e) => {
            assert!(e.contains("by hand") || e.contains("spans") || e.contains("crosses") || e.contains("fill"), "{e}")
        }
    }
}
