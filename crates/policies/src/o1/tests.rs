//! Hook-level tests of the O(1) policy.
