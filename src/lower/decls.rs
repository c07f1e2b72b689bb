//! Declaration lookups, indexed once per shader.
//!
//! Lowering asks "which declaration covers register `i` of file `F`" on uses of inputs,
//! outputs, system values, memory, images and sampler views, and "which range may an indirect
//! access touch" on every indirect operand. A scan of the declarations per use would cost
//! declarations × uses; this index is built in O(d log d) for `d` declarations and answers in
//! O(log d) when the declarations of a file do not overlap (the checker rejects overlaps,
//! E0110, within one file and dimension).
//!
//! Invariant: every answer equals the one of a scan in statement order, i.e. the *first*
//! declaration (in statement order) that covers the index and passes the caller's filter —
//! also for overlapping declarations (e.g. the same range declared under two dimensions),
//! where the lookup walks back over the overlapping candidates.

use crate::tgsi::ast::{Declaration, File, Program, ResourceDecl};

/// One declaration in a range table.
#[derive(Clone, Copy)]
struct Entry<'p> {
    decl: &'p Declaration,
    /// The statement-order position (tie-breaker between overlapping ranges).
    position: u32,
    /// The largest `last` of this entry and the entries before it in the same file
    /// (stops the backward walk of [`Declarations::covering_if`]).
    cover: u32,
}

/// The declarations sorted for range queries. Small shaders dominate, so everything lives in
/// one vector (tables that stay empty allocate nothing).
pub struct Declarations<'p> {
    /// Sorted by `(file, first, position)`; the file segments are given by `starts`.
    entries: Vec<Entry<'p>>,
    /// `entries[starts[f]..starts[f + 1]]` are the declarations of file `f`.
    starts: [u32; File::ALL.len() + 1],
    /// `DCL SVIEW` and legacy `DCL RES` declarations of sampler views, sorted by
    /// `(first, position)`.
    views: Vec<Entry<'p>>,
    /// `(file, ArrayID, declaration)` of the first declaration of each array, sorted.
    arrays: Vec<(File, u32, &'p Declaration)>,
}

impl<'p> Declarations<'p> {
    pub fn new(program: &'p Program) -> Declarations<'p> {
        // A counting sort by file (declarations usually come in ascending order within a
        // file, so the per-file sorts below only check).
        let mut starts = [0u32; File::ALL.len() + 1];
        for decl in program.declarations() {
            starts[decl.file as usize + 1] += 1;
        }
        for f in 0..File::ALL.len() {
            starts[f + 1] += starts[f];
        }
        let mut next = starts;
        // Every slot is overwritten below; the first declaration only fills them meanwhile.
        let mut entries: Vec<Entry<'p>> = match program.declarations().next() {
            Some(decl) => vec![Entry { decl, position: 0, cover: 0 }; starts[File::ALL.len()] as usize],
            None => Vec::new(),
        };
        let mut views = Vec::new();
        let mut arrays = Vec::new();
        for (position, decl) in program.declarations().enumerate() {
            let entry = Entry { decl, position: position as u32, cover: decl.last };
            entries[next[decl.file as usize] as usize] = entry;
            next[decl.file as usize] += 1;
            if matches!(decl.file, File::SamplerView | File::LegacyResource)
                && matches!(decl.resource, Some(ResourceDecl::SamplerView { .. }))
            {
                views.push(entry);
            }
            if let Some(id) = decl.array_id {
                arrays.push((decl.file, id, decl));
            }
        }
        for f in 0..File::ALL.len() {
            // A file with one declaration is sorted and covered already.
            if starts[f + 1] - starts[f] > 1 {
                sort_and_cover(&mut entries[starts[f] as usize..starts[f + 1] as usize]);
            }
        }
        sort_and_cover(&mut views);
        // Stable: the first declaration of an array stays first among its equals.
        arrays.sort_by_key(|&(file, id, _)| (file, id));
        arrays.dedup_by_key(|&mut (file, id, _)| (file, id));
        Declarations { entries, starts, views, arrays }
    }

    fn segment(&self, file: File) -> &[Entry<'p>] {
        &self.entries[self.starts[file as usize] as usize..self.starts[file as usize + 1] as usize]
    }

    /// The first declaration of `file` (in statement order) covering register `index`.
    pub fn covering(&self, file: File, index: i64) -> Option<&'p Declaration> {
        covering(self.segment(file), index, |_| true)
    }

    /// The first declaration of `file` covering register `index` that `accept` allows.
    pub fn covering_if(
        &self,
        file: File,
        index: i64,
        accept: impl Fn(&Declaration) -> bool,
    ) -> Option<&'p Declaration> {
        covering(self.segment(file), index, accept)
    }

    /// The first sampler-view declaration (SVIEW or legacy RES) covering view `unit`.
    pub fn view(&self, unit: i64) -> Option<&'p Declaration> {
        covering(&self.views, unit, |_| true)
    }

    /// The first declaration of `file` with ArrayID `id`.
    pub fn array(&self, file: File, id: u32) -> Option<&'p Declaration> {
        let at = self.arrays.binary_search_by_key(&(file, id), |&(file, id, _)| (file, id)).ok()?;
        Some(self.arrays[at].2)
    }

    /// The smallest first and largest last register of `file` (0, 0 without declarations).
    pub fn span(&self, file: File) -> (i64, i64) {
        let segment = self.segment(file);
        let first = segment.first().map_or(0, |e| i64::from(e.decl.first));
        let last = segment.last().map_or(0, |e| i64::from(e.cover));
        (first, last)
    }
}

/// Sorts a table in statement order by `(first, position)` and sets each `cover` to the running
/// maximum of `last`.
fn sort_and_cover(table: &mut [Entry]) {
    if !table.is_sorted_by_key(|e| e.decl.first) {
        // Stable: equal firsts keep statement order.
        table.sort_by_key(|e| e.decl.first);
    }
    let mut widest = 0;
    for e in table {
        widest = widest.max(e.decl.last);
        e.cover = widest;
    }
}

/// The first entry in statement order of `table` (sorted by first register, with running
/// covers) that covers `index` and that `accept` allows. Without overlaps the walk stops at
/// the first entry it looks at.
fn covering<'p>(table: &[Entry<'p>], index: i64, accept: impl Fn(&Declaration) -> bool) -> Option<&'p Declaration> {
    let index = u32::try_from(index).ok()?;
    let upto = table.partition_point(|e| e.decl.first <= index);
    let mut best: Option<Entry> = None;
    for e in table[..upto].iter().rev() {
        if e.cover < index {
            break;
        }
        if e.decl.last >= index && best.is_none_or(|b| e.position < b.position) && accept(e.decl) {
            best = Some(*e);
        }
    }
    best.map(|b| b.decl)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tgsi::parse;

    fn program(text: &str) -> crate::tgsi::ast::Program {
        parse(text).expect("parses")
    }

    /// The scan the index replaces: first in statement order.
    fn scan(p: &crate::tgsi::ast::Program, file: File, index: i64) -> Option<&Declaration> {
        p.declarations().find(|d| d.file == file && (i64::from(d.first)..=i64::from(d.last)).contains(&index))
    }

    #[test]
    fn covering_matches_a_scan_also_with_overlaps() {
        // Overlapping and nested ranges (the checker rejects them, the index still answers
        // like the scan).
        let p = program(
            "FRAG\nDCL TEMP[4..9]\nDCL TEMP[0..20]\nDCL TEMP[2..3]\nDCL TEMP[30]\nDCL TEMP[5]\nDCL IN[3], GENERIC[0]\nEND\n",
        );
        let index = Declarations::new(&p);
        for file in [File::Temp, File::Input, File::Output] {
            for i in -2..40 {
                let want = scan(&p, file, i).map(|d| d.span);
                assert_eq!(index.covering(file, i).map(|d| d.span), want, "{file:?}[{i}]");
            }
        }
        assert_eq!(index.span(File::Temp), (0, 30));
        assert_eq!(index.span(File::Output), (0, 0));
    }

    #[test]
    fn views_and_arrays() {
        let p = program(
            "FRAG\nDCL SVIEW[0..1], 2D, FLOAT\nDCL SVIEW[3], CUBE, UINT\nDCL TEMP[0..3], ARRAY(1)\nDCL TEMP[4..5], ARRAY(2)\nEND\n",
        );
        let index = Declarations::new(&p);
        assert_eq!(index.view(1).map(|d| d.first), Some(0));
        assert_eq!(index.view(2).map(|d| d.first), None);
        assert_eq!(index.view(3).map(|d| d.first), Some(3));
        assert_eq!(index.array(File::Temp, 2).map(|d| d.first), Some(4));
        assert_eq!(index.array(File::Temp, 3).map(|d| d.first), None);
        assert_eq!(index.covering_if(File::Temp, 5, |d| d.array_id.is_some()).map(|d| d.last), Some(5));
    }
}
