//! SSA construction for TGSI's mutable registers over structured control flow.
//!
//! Every register component that TGSI can write (TEMP, OUT, ADDR, …) is a *variable*; the state
//! holds each variable's current SSA value. Control-flow constructs (IF, loops, SWITCH, inlined
//! subroutines, the main program) open a *frame*; the frame logs, for every variable first
//! written inside it, the value it had at the frame's entry. That log is all a join needs:
//! snapshots taken at the frame's edges (ELSE, BRK, CONT, fall-through) plus the entry values
//! give every incoming value of every φ, and closing the frame passes its log to the parent.
//!
//! Cost: each write is logged once per frame it is first seen in, and each closed frame hands
//! its log up one level, so the total work is the number of writes times the nesting depth —
//! linear for real shaders, with no recursion.

use crate::ir::Value;

/// A variable: one component of one TGSI register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Var(pub u32);

#[derive(Clone, Copy, Debug)]
struct Logged {
    var: Var,
    /// The value at the frame's entry (`None`: undefined).
    old: Option<Value>,
    /// The variable's stamp before this frame logged it.
    prev_stamp: u32,
}

/// An open frame: its id (for the stamps) and where its entries start in the shared log.
#[derive(Clone, Copy, Debug)]
struct Frame {
    id: u32,
    start: usize,
}

/// The values of variables at one edge into a join of a frame.
///
/// * `Prefix`: the values of the frame's logged variables in log order, taken while the frame
///   was the innermost one; variables logged after it had their entry value on that edge.
/// * `Explicit`: (variable, value) pairs sorted by variable, taken while inner frames were
///   open (a BRK or RET inside an IF); variables not listed had their entry value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Snapshot {
    Prefix(Vec<Option<Value>>),
    Explicit(Vec<(Var, Option<Value>)>),
}

impl Default for Snapshot {
    fn default() -> Snapshot {
        Snapshot::Prefix(Vec::new())
    }
}

/// Current values of all variables and the open frames.
///
/// The frames' logs live in one stack (`log`), innermost frame on top: opening a frame
/// allocates nothing, and closing one hands its entries to the parent in place.
#[derive(Debug)]
pub struct SsaState {
    current: Vec<Option<Value>>,
    /// Id of the innermost frame that logged each variable (0: none).
    stamp: Vec<u32>,
    frames: Vec<Frame>,
    /// The innermost frame's id (every write asks).
    top_id: u32,
    log: Vec<Logged>,
    next_id: u32,
}

impl Default for SsaState {
    fn default() -> SsaState {
        SsaState::new()
    }
}

impl SsaState {
    /// A state with the root frame open.
    pub fn new() -> SsaState {
        SsaState::with_capacity(0)
    }

    /// A state with the root frame open and room for `vars` variables.
    pub fn with_capacity(vars: usize) -> SsaState {
        // The root frame and the main program's, plus room for a few nested constructs: the
        // main program opens its frame at once, which would regrow a one-frame list.
        let mut frames = Vec::with_capacity(8);
        frames.push(Frame { id: 1, start: 0 });
        SsaState {
            current: Vec::with_capacity(vars),
            stamp: Vec::with_capacity(vars),
            frames,
            top_id: 1,
            log: Vec::with_capacity(vars),
            next_id: 2,
        }
    }

    /// A fresh variable (undefined until written).
    pub fn new_var(&mut self) -> Var {
        self.current.push(None);
        self.stamp.push(0);
        Var(self.current.len() as u32 - 1)
    }

    /// `n` consecutive fresh variables; returns the first.
    pub fn new_vars(&mut self, n: usize) -> Var {
        let first = Var(self.current.len() as u32);
        self.current.resize(self.current.len() + n, None);
        self.stamp.resize(self.stamp.len() + n, 0);
        first
    }

    /// The current value; `None` when the variable was never written on this path.
    pub fn read(&self, var: Var) -> Option<Value> {
        self.current[var.0 as usize]
    }

    /// Sets the current value, logging the variable in the innermost frame.
    #[inline]
    pub fn write(&mut self, var: Var, value: Value) {
        self.log(var);
        self.current[var.0 as usize] = Some(value);
    }

    #[inline]
    fn log(&mut self, var: Var) {
        let id = self.top_id;
        let i = var.0 as usize;
        if self.stamp[i] != id {
            self.log.push(Logged { var, old: self.current[i], prev_stamp: self.stamp[i] });
            self.stamp[i] = id;
        }
    }

    /// Opens a frame.
    pub fn open(&mut self) {
        self.frames.push(Frame { id: self.next_id, start: self.log.len() });
        self.top_id = self.next_id;
        self.next_id += 1;
    }

    /// The innermost frame's log.
    fn top_log(&self) -> &[Logged] {
        &self.log[self.top().start..]
    }

    /// The variables the innermost frame logged so far, in log order.
    pub fn logged(&self) -> impl Iterator<Item = Var> + '_ {
        self.top_log().iter().map(|l| l.var)
    }

    pub fn logged_count(&self) -> usize {
        self.top_log().len()
    }

    /// The entry value of the `k`-th logged variable of the innermost frame.
    pub fn entry_value(&self, k: usize) -> Option<Value> {
        self.top_log()[k].old
    }

    /// The current values of the innermost frame's logged variables.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::Prefix(self.top_log().iter().map(|l| self.current[l.var.0 as usize]).collect())
    }

    /// The current values of every variable logged by the innermost `frames` frames: the
    /// state on an edge that leaves `frames − 1` inner constructs at once.
    pub fn snapshot_through(&self, frames: usize) -> Snapshot {
        if frames <= 1 {
            return self.snapshot();
        }
        let first = self.frames.len().saturating_sub(frames);
        // The frames' logs are contiguous, outermost first.
        let entries = &self.log[self.frames[first].start..];
        let mut pairs: Vec<(Var, Option<Value>)> =
            entries.iter().map(|l| (l.var, self.current[l.var.0 as usize])).collect();
        pairs.sort_by_key(|p| p.0);
        pairs.dedup_by_key(|p| p.0);
        Snapshot::Explicit(pairs)
    }

    /// The value of the `k`-th logged variable (of the innermost frame) on the edge a snapshot
    /// was taken at.
    pub fn value_at(&self, snapshot: &Snapshot, k: usize) -> Option<Value> {
        let log = &self.top_log()[k];
        match snapshot {
            Snapshot::Prefix(values) => match values.get(k) {
                Some(&v) => v,
                None => log.old,
            },
            Snapshot::Explicit(pairs) => match pairs.binary_search_by_key(&log.var, |p| p.0) {
                Ok(i) => pairs[i].1,
                Err(_) => log.old,
            },
        }
    }

    /// Resets every variable the innermost frame logged to its entry value (the frame stays
    /// open and keeps its log).
    pub fn restore_entry(&mut self) {
        let start = self.top().start;
        for l in &self.log[start..] {
            self.current[l.var.0 as usize] = l.old;
        }
    }

    /// Closes the innermost frame. Its logged variables become logged in the parent (with the
    /// parent's entry values), and their current values stay as they are; the caller then
    /// writes the merged values.
    pub fn close(&mut self) {
        assert!(self.frames.len() > 1, "the root frame cannot be closed");
        let frame = self.frames.pop().expect("checked above");
        let parent_id = self.top().id;
        self.top_id = parent_id;
        // The frame's entries sit on top of the parent's: keep, in order, those the parent
        // has not logged (they become the parent's), drop the others.
        let mut kept = frame.start;
        for k in frame.start..self.log.len() {
            let l = self.log[k];
            let i = l.var.0 as usize;
            self.stamp[i] = l.prev_stamp;
            if l.prev_stamp != parent_id {
                self.log[kept] = l;
                kept += 1;
                self.stamp[i] = parent_id;
            }
        }
        self.log.truncate(kept);
    }

    fn top(&self) -> &Frame {
        self.frames.last().expect("the root frame is never closed")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_log_first_writes_and_hand_them_up() {
        let mut s = SsaState::new();
        let (a, b, c) = (s.new_var(), s.new_var(), s.new_var());
        s.write(a, Value(1));
        s.open();
        s.write(b, Value(2));
        s.write(b, Value(3));
        s.write(a, Value(4));
        assert_eq!(s.logged().collect::<Vec<_>>(), vec![b, a]);
        let then = s.snapshot();
        s.restore_entry();
        assert_eq!(s.read(a), Some(Value(1)));
        assert_eq!(s.read(b), None);
        s.write(c, Value(5));
        // The snapshot predates c's log entry: on that edge c had its entry value.
        assert_eq!(s.value_at(&then, 0), Some(Value(3)));
        assert_eq!(s.value_at(&then, 2), None);
        s.close();
        // Nested frame's variables are now logged in the root frame exactly once.
        s.open();
        s.write(a, Value(6));
        s.close();
        s.write(c, Value(7));
        assert_eq!(s.read(c), Some(Value(7)));
    }

    #[test]
    fn explicit_snapshots_see_inner_frames() {
        let mut s = SsaState::new();
        let (a, b) = (s.new_var(), s.new_var());
        s.open(); // a routine
        s.write(a, Value(1));
        s.open(); // an IF inside it
        s.write(b, Value(2));
        let ret = s.snapshot_through(2);
        s.close();
        // After the IF closes, the routine frame logs `b` too; the RET edge saw b = %2.
        let k = s.logged().position(|v| v == b).unwrap();
        assert_eq!(s.value_at(&ret, k), Some(Value(2)));
        let k = s.logged().position(|v| v == a).unwrap();
        assert_eq!(s.value_at(&ret, k), Some(Value(1)));
    }

    #[test]
    fn parent_keeps_its_own_entry_value() {
        let mut s = SsaState::new();
        let a = s.new_var();
        s.open(); // outer
        s.write(a, Value(1));
        s.open(); // inner
        s.write(a, Value(2));
        assert_eq!(s.entry_value(0), Some(Value(1)));
        s.close();
        // Outer logged `a` before the inner frame: its entry value is still "undefined".
        assert_eq!(s.logged_count(), 1);
        assert_eq!(s.entry_value(0), None);
    }
}
