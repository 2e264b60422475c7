//! The fair class's timeline: a balanced search tree of the entities waiting on one
//! `cfs_rq` (`curr` is not in it while it runs), ordered by a key and augmented with the
//! smallest `vruntime` and the smallest `slice` of every subtree.
//!
//! The kernel uses an augmented red-black tree (`kernel/sched/fair.c: __enqueue_entity`,
//! `min_vruntime_cb`): CFS orders it by `vruntime`; EEVDF from v6.12 orders it by virtual
//! `deadline` and keeps each subtree's `min_vruntime` (and `min_slice`) so that
//! `pick_eevdf` can find the earliest deadline among *eligible* entities in O(log n)
//! (v6.6 ordered by vruntime and augmented `min_deadline`; the entity it finds is the same
//! up to exact deadline ties). Here the tree is a treap whose priorities come from a hash
//! of the insertion sequence number, so its shape — and every result — is deterministic.
//!
//! Nodes live in one arena shared by all timelines, indexed by entity id: an entity is in
//! at most one timeline at a time. A node keeps a copy of the entity's key, vruntime and
//! slice taken at insertion; the kernel likewise never changes a queued entity's key
//! without taking it out of the tree.

/// No node.
pub const NIL: u32 = u32::MAX;

/// One cache line a node (64 bytes of fields): the arena's allocation is line-aligned, so
/// a descent touches one line per level instead of straddling two. The treap priority is
/// recomputed from `seq` where needed rather than stored, leaving room for the left
/// subtree's smallest vruntime: the eligible search tests it at every level and, when it
/// turns right, need not load the left child at all.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Node {
    left: u32,
    right: u32,
    key: u64,
    seq: u64,
    vruntime: u64,
    slice: u64,
    /// Smallest `vruntime` / `slice` in this subtree.
    min_vruntime: u64,
    min_slice: u64,
    /// Smallest `vruntime` of the left subtree (`u64::MAX` without one).
    left_min_vruntime: u64,
}

const _: () = assert!(std::mem::size_of::<Node>() == 64);

const EMPTY: Node = Node {
    left: NIL,
    right: NIL,
    key: 0,
    seq: 0,
    vruntime: 0,
    slice: 0,
    min_vruntime: 0,
    min_slice: 0,
    left_min_vruntime: u64::MAX,
};

/// One runqueue's tree: its root, size and leftmost node (`rb_root_cached`: the kernel
/// caches the leftmost so a pick need not descend to it).
#[derive(Clone, Copy, Debug)]
pub struct Timeline {
    root: u32,
    len: u32,
    first: u32,
}

impl Default for Timeline {
    fn default() -> Self {
        Timeline { root: NIL, len: 0, first: NIL }
    }
}

impl Timeline {
    pub fn len(&self) -> usize {
        self.len as usize
    }
}

/// What an inserted entity is ordered and augmented by.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub key: u64,
    pub seq: u64,
    pub vruntime: u64,
    pub slice: u64,
}

/// The node arena of every timeline.
#[derive(Clone, Debug, Default)]
pub struct Nodes {
    n: Vec<Node>,
    /// Work of the tree operations so far, for the policy's counters.
    pub ops: TreeOps,
}

/// How much work the tree operations did, counted as the kernel's rbtree would do it:
/// an insertion (`rb_add_cached`) compares the new entity with one node per level on its
/// way down; an erase (`rb_erase_cached`) is handed the node, so it does no search, only
/// the relinking of the node's subtrees (counted as the merge's levels here).
#[derive(Clone, Copy, Debug, Default)]
pub struct TreeOps {
    pub inserts: u64,
    /// Key comparisons of insertions: O(log n).
    pub insert_compares: u64,
    pub erases: u64,
    /// Subtree relinks of erases: O(1) expected.
    pub erase_relinks: u64,
}

/// A 32-bit mix of the sequence number (splitmix64's finaliser): treap priorities.
fn prio(seq: u64) -> u32 {
    let mut z = seq.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) as u32
}

impl Nodes {
    /// Room for `n` entities in all, allocated exactly.
    pub fn reserve_exact(&mut self, n: usize) {
        self.n.reserve_exact(n.saturating_sub(self.n.len()));
    }
    fn node(&self, i: u32) -> &Node {
        &self.n[i as usize]
    }
    fn prio_of(&self, i: u32) -> u32 {
        prio(self.node(i).seq)
    }

    /// Recomputes the augmented values of `i` from its children (`min_vruntime_update`).
    fn pull(&mut self, i: u32) {
        let Node { left, right, vruntime, slice, .. } = self.n[i as usize];
        let (mut mv, mut ms) = (vruntime, slice);
        let mut lmv = u64::MAX;
        if left != NIL {
            let cn = &self.n[left as usize];
            lmv = cn.min_vruntime;
            mv = mv.min(cn.min_vruntime);
            ms = ms.min(cn.min_slice);
        }
        if right != NIL {
            let cn = &self.n[right as usize];
            mv = mv.min(cn.min_vruntime);
            ms = ms.min(cn.min_slice);
        }
        let n = &mut self.n[i as usize];
        n.min_vruntime = mv;
        n.min_slice = ms;
        n.left_min_vruntime = lmv;
    }

    fn less(&self, a: u32, key: u64, seq: u64) -> bool {
        let n = self.node(a);
        (n.key, n.seq) < (key, seq)
    }

    /// Splits the subtree at `t` into nodes ordered before `(key, seq)` and the rest.
    /// Recursion depth is the treap's height: O(log n) with hashed priorities.
    fn split(&mut self, t: u32, key: u64, seq: u64) -> (u32, u32) {
        if t == NIL {
            return (NIL, NIL);
        }
        self.ops.insert_compares += 1;
        if self.less(t, key, seq) {
            let (l, r) = self.split(self.n[t as usize].right, key, seq);
            self.n[t as usize].right = l;
            self.pull(t);
            (t, r)
        } else {
            let (l, r) = self.split(self.n[t as usize].left, key, seq);
            self.n[t as usize].left = r;
            self.pull(t);
            (l, t)
        }
    }

    /// Joins two subtrees whose keys are ordered (`a` before `b`).
    fn merge(&mut self, a: u32, b: u32) -> u32 {
        self.ops.erase_relinks += 1;
        if a == NIL {
            return b;
        }
        if b == NIL {
            return a;
        }
        if self.prio_of(a) >= self.prio_of(b) {
            let r = self.merge(self.n[a as usize].right, b);
            self.n[a as usize].right = r;
            self.pull(a);
            a
        } else {
            let l = self.merge(a, self.n[b as usize].left);
            self.n[b as usize].left = l;
            self.pull(b);
            b
        }
    }

    /// `__enqueue_entity`: inserts entity `id`.
    pub fn insert(&mut self, t: &mut Timeline, id: u32, e: Entry) {
        let i = id as usize;
        if self.n.len() <= i {
            self.n.resize(i + 1, EMPTY);
        }
        self.n[i] = Node {
            left: NIL,
            right: NIL,
            key: e.key,
            seq: e.seq,
            vruntime: e.vruntime,
            slice: e.slice,
            min_vruntime: e.vruntime,
            min_slice: e.slice,
            left_min_vruntime: u64::MAX,
        };
        if t.first == NIL || !self.less(t.first, e.key, e.seq) {
            t.first = id;
        }
        t.root = self.insert_at(t.root, id, prio(e.seq));
        t.len += 1;
        self.ops.inserts += 1;
    }

    /// Descends to where node `id`'s priority puts it and splits only the subtree found
    /// there around it: about half the work of splitting the whole tree and merging back.
    /// Recursion depth is the treap's height, as for [`Nodes::split`].
    fn insert_at(&mut self, at: u32, id: u32, id_prio: u32) -> u32 {
        if at == NIL {
            return id;
        }
        self.ops.insert_compares += 1;
        let Node { key, seq, .. } = self.n[id as usize];
        if id_prio > self.prio_of(at) {
            let (l, r) = self.split(at, key, seq);
            self.n[id as usize].left = l;
            self.n[id as usize].right = r;
            self.pull(id);
            return id;
        }
        if self.less(at, key, seq) {
            let r = self.insert_at(self.n[at as usize].right, id, id_prio);
            self.n[at as usize].right = r;
        } else {
            let l = self.insert_at(self.n[at as usize].left, id, id_prio);
            self.n[at as usize].left = l;
        }
        self.pull(at);
        at
    }

    /// `__dequeue_entity`: removes entity `id`, which must be in `t`.
    pub fn remove(&mut self, t: &mut Timeline, id: u32) {
        let (key, seq) = (self.node(id).key, self.node(id).seq);
        t.root = self.remove_at(t.root, id, key, seq);
        t.len -= 1;
        if t.first == id {
            // `rb_erase_cached`: the next node becomes the leftmost (the nodes on the way
            // were just touched by the removal).
            t.first = self.leftmost_from(t.root);
        }
        self.ops.erases += 1;
    }

    fn remove_at(&mut self, at: u32, id: u32, key: u64, seq: u64) -> u32 {
        assert!(at != NIL, "entity {id} is not in this timeline");
        if at == id {
            let Node { left, right, .. } = self.n[at as usize];
            return self.merge(left, right);
        }
        if self.less(at, key, seq) {
            let r = self.remove_at(self.n[at as usize].right, id, key, seq);
            self.n[at as usize].right = r;
        } else {
            let l = self.remove_at(self.n[at as usize].left, id, key, seq);
            self.n[at as usize].left = l;
        }
        self.pull(at);
        at
    }

    /// `__pick_first_entity`: the entity with the smallest key (cached).
    pub fn first(&self, t: &Timeline) -> Option<u32> {
        (t.first != NIL).then_some(t.first)
    }

    /// The leftmost node of the subtree at `at` (`NIL` for an empty one).
    fn leftmost_from(&self, mut at: u32) -> u32 {
        if at == NIL {
            return NIL;
        }
        while self.node(at).left != NIL {
            at = self.node(at).left;
        }
        at
    }

    /// `__pick_next_entity(first)`: the entity after the first.
    pub fn second(&self, t: &Timeline) -> Option<u32> {
        let mut at = t.root;
        let mut parent = NIL;
        if at == NIL {
            return None;
        }
        while self.node(at).left != NIL {
            parent = at;
            at = self.node(at).left;
        }
        let right = self.node(at).right;
        if right == NIL {
            return (parent != NIL).then_some(parent);
        }
        let mut at = right;
        while self.node(at).left != NIL {
            at = self.node(at).left;
        }
        Some(at)
    }

    /// The smallest vruntime and slice in the tree (the root's augmented values).
    pub fn min_vruntime(&self, t: &Timeline) -> Option<u64> {
        (t.root != NIL).then(|| self.node(t.root).min_vruntime)
    }
    pub fn min_slice(&self, t: &Timeline) -> Option<u64> {
        (t.root != NIL).then(|| self.node(t.root).min_slice)
    }

    /// The heap search of `__pick_eevdf` (v6.12+): the entity with the smallest key among
    /// those whose vruntime is eligible. Eligible entities in a left subtree always have an
    /// earlier key, so descend left whenever its smallest vruntime is eligible; else take
    /// the node if it is eligible; else go right.
    #[cfg(test)]
    pub fn pick_eligible(&self, t: &Timeline, eligible: impl Fn(u64) -> bool) -> Option<u32> {
        self.pick_eligible_counted(t, eligible).0
    }

    /// [`Nodes::pick_eligible`], also returning how many entities it compared (the cached
    /// leftmost, then each node of the descent), for the cost model.
    pub fn pick_eligible_counted(&self, t: &Timeline, eligible: impl Fn(u64) -> bool) -> (Option<u32>, u64) {
        let mut visited = 0;
        if let Some(f) = self.first(t) {
            visited += 1;
            if eligible(self.node(f).vruntime) {
                return (Some(f), visited);
            }
        }
        let mut at = t.root;
        while at != NIL {
            visited += 1;
            let n = self.node(at);
            if n.left != NIL && eligible(n.left_min_vruntime) {
                at = n.left;
                continue;
            }
            if eligible(n.vruntime) {
                return (Some(at), visited);
            }
            at = n.right;
        }
        (None, visited)
    }

    /// The entities in key order (tests; O(n)).
    #[cfg(test)]
    pub fn in_order(&self, t: &Timeline, out: &mut Vec<u32>) {
        self.for_each_in_order(t, &mut |i| out.push(i));
    }

    /// Calls `f` on the entities in key order, allocating nothing (the checks run after
    /// every event): recursion as deep as the treap, which its random priorities keep
    /// O(log n) deep.
    pub fn for_each_in_order(&self, t: &Timeline, f: &mut impl FnMut(u32)) {
        self.visit(t.root, f);
    }

    /// In-order walk of the subtree at `at`: the left subtree recursively, the right one by
    /// looping (so only left spines take stack).
    fn visit(&self, mut at: u32, f: &mut impl FnMut(u32)) {
        while at != NIL {
            let n = self.node(at);
            self.visit(n.left, f);
            f(at);
            at = n.right;
        }
    }

    /// The key an entity was inserted with.
    pub fn key_of(&self, id: u32) -> (u64, u64) {
        (self.node(id).key, self.node(id).seq)
    }

    /// Checks order, augmentation and size (tests: the model [`Nodes::check_walk`] is
    /// compared with); `all` is the tree's [`Nodes::in_order`] list.
    #[cfg(test)]
    pub fn check(&self, t: &Timeline, all: &[u32]) -> Result<(), String> {
        if all.len() != t.len() {
            return Err(format!("timeline holds {} nodes but counts {}", all.len(), t.len()));
        }
        if self.first(t) != all.first().copied() {
            return Err(format!("timeline caches {:?} as leftmost, not {:?}", self.first(t), all.first()));
        }
        for w in all.windows(2) {
            if self.key_of(w[0]) >= self.key_of(w[1]) {
                return Err(format!("timeline out of order at entities {} and {}", w[0], w[1]));
            }
        }
        match all.iter().find(|&&i| !self.augmented(i)) {
            Some(i) => Err(format!("timeline augmentation of entity {i} is stale")),
            None => Ok(()),
        }
    }

    /// [`Nodes::check`] in the one walk that hands `f` each entity in key order (`--check`,
    /// after every event: no list built), failing as `check` would on the walk's list.
    pub fn check_walk(&self, t: &Timeline, f: &mut impl FnMut(u32)) -> Result<(), String> {
        let (mut n, mut first, mut prev) = (0, None, None);
        let (mut order, mut stale) = (None, None);
        self.for_each_in_order(t, &mut |i| {
            n += 1;
            first = first.or(Some(i));
            if let Some(p) = prev.replace(i) {
                if order.is_none() && self.key_of(p) >= self.key_of(i) {
                    order = Some((p, i));
                }
            }
            if stale.is_none() && !self.augmented(i) {
                stale = Some(i);
            }
            f(i);
        });
        if n != t.len() {
            return Err(format!("timeline holds {n} nodes but counts {}", t.len()));
        }
        if self.first(t) != first {
            return Err(format!("timeline caches {:?} as leftmost, not {first:?}", self.first(t)));
        }
        if let Some((a, b)) = order {
            return Err(format!("timeline out of order at entities {a} and {b}"));
        }
        match stale {
            Some(i) => Err(format!("timeline augmentation of entity {i} is stale")),
            None => Ok(()),
        }
    }

    /// Whether `i`'s augmented values are its subtree's (what [`Nodes::pull`] computes).
    fn augmented(&self, i: u32) -> bool {
        let n = *self.node(i);
        let mut mv = n.vruntime;
        let mut ms = n.slice;
        for c in [n.left, n.right] {
            if c != NIL {
                mv = mv.min(self.node(c).min_vruntime);
                ms = ms.min(self.node(c).min_slice);
            }
        }
        let lmv = if n.left == NIL { u64::MAX } else { self.node(n.left).min_vruntime };
        (mv, ms, lmv) == (n.min_vruntime, n.min_slice, n.left_min_vruntime)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive_pick(items: &[(u32, Entry)], eligible: impl Fn(u64) -> bool) -> Option<u32> {
        items.iter().filter(|(_, e)| eligible(e.vruntime)).min_by_key(|(_, e)| (e.key, e.seq)).map(|x| x.0)
    }

    proptest! {
        /// Against a plain list: order, first/second, min vruntime/slice and the eligible
        /// pick agree after every insert and remove.
        #[test]
        fn treap_agrees_with_a_scan(ops in proptest::collection::vec((0u32..40, 0u64..50, 0u64..50, 1u64..9, any::<bool>()), 1..200),
                                    v_limit in 0u64..50) {
            let mut nodes = Nodes::default();
            let mut t = Timeline::default();
            let mut items: Vec<(u32, Entry)> = Vec::new();
            for (seq, (id, key, vr, slice, ins)) in ops.into_iter().enumerate() {
                let present = items.iter().position(|x| x.0 == id);
                match (ins, present) {
                    (true, None) => {
                        let e = Entry { key, seq: seq as u64, vruntime: vr, slice };
                        nodes.insert(&mut t, id, e);
                        items.push((id, e));
                    }
                    (false, Some(i)) => {
                        nodes.remove(&mut t, id);
                        items.remove(i);
                    }
                    _ => continue,
                }
                let mut all = Vec::new();
                nodes.in_order(&t, &mut all);
                nodes.check(&t, &all).map_err(TestCaseError::fail)?;
                let mut walked = Vec::new();
                nodes.check_walk(&t, &mut |i| walked.push(i)).map_err(TestCaseError::fail)?;
                prop_assert_eq!(&walked, &all);
                let mut sorted = items.clone();
                sorted.sort_by_key(|(_, e)| (e.key, e.seq));
                prop_assert_eq!(nodes.first(&t), sorted.first().map(|x| x.0));
                prop_assert_eq!(nodes.second(&t), sorted.get(1).map(|x| x.0));
                prop_assert_eq!(nodes.min_vruntime(&t), items.iter().map(|x| x.1.vruntime).min());
                prop_assert_eq!(nodes.min_slice(&t), items.iter().map(|x| x.1.slice).min());
                let elig = |v: u64| v <= v_limit;
                prop_assert_eq!(nodes.pick_eligible(&t, elig), naive_pick(&items, elig));
            }
        }
    }
}
