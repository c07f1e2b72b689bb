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

use crate::tgsi::ast::{Declaration, File, ResourceDecl};
use rustc_hash::FxHashMap;

/// The declarations of one file (or of the sampler views) ordered for range queries.
#[derive(Default)]
pub struct Ranges<'p> {
    /// In statement order; positions in here are the tie-breaker between overlapping ranges.
    decls: Vec<&'p Declaration>,
    /// `(first, last, position in decls)`, sorted by `(first, position)`.
    sorted: Vec<(u32, u32, u32)>,
    /// `cover[k]`: the largest `last` in `sorted[..=k]` (stops the backward walk).
    cover: Vec<u32>,
}

impl<'p> Ranges<'p> {
    fn push(&mut self, d: &'p Declaration) {
        self.sorted.push((d.first, d.last, self.decls.len() as u32));
        self.decls.push(d);
    }

    fn finish(&mut self) {
        self.sorted.sort_unstable_by_key(|&(first, _, position)| (first, position));
        let mut widest = 0;
        self.cover = self
            .sorted
            .iter()
            .map(|&(_, last, _)| {
                widest = widest.max(last);
                widest
            })
            .collect();
    }

    /// The first declaration in statement order covering `index` that `accept` allows.
    pub fn covering(&self, index: i64, accept: impl Fn(&Declaration) -> bool) -> Option<&'p Declaration> {
        let index = u32::try_from(index).ok()?;
        let upto = self.sorted.partition_point(|&(first, _, _)| first <= index);
        let mut best: Option<u32> = None;
        for k in (0..upto).rev() {
            if self.cover[k] < index {
                break;
            }
            let (_, last, position) = self.sorted[k];
            if last >= index && best.is_none_or(|b| position < b) && accept(self.decls[position as usize]) {
                best = Some(position);
            }
        }
        best.map(|b| self.decls[b as usize])
    }

    /// The declarations in statement order.
    pub fn in_order(&self) -> &[&'p Declaration] {
        &self.decls
    }

    /// The smallest first and largest last register (0, 0 without declarations).
    pub fn span(&self) -> (i64, i64) {
        let first = self.sorted.first().map_or(0, |&(first, _, _)| i64::from(first));
        let last = self.cover.last().map_or(0, |&last| i64::from(last));
        (first, last)
    }
}

/// Per-file range indexes, the sampler-view table and the arrays by ArrayID.
pub struct Declarations<'p> {
    /// Indexed by `File as usize`.
    files: Vec<Ranges<'p>>,
    /// `DCL SVIEW` and legacy `DCL RES` declarations that declare sampler views.
    views: Ranges<'p>,
    /// The first declaration of each `(file, ArrayID)`.
    arrays: FxHashMap<(File, u32), &'p Declaration>,
}

impl<'p> Declarations<'p> {
    pub fn new(declarations: impl Iterator<Item = &'p Declaration>) -> Declarations<'p> {
        let mut files: Vec<Ranges<'p>> = (0..File::ALL.len()).map(|_| Ranges::default()).collect();
        let mut views = Ranges::default();
        let mut arrays = FxHashMap::default();
        for d in declarations {
            files[d.file as usize].push(d);
            if matches!(d.file, File::SamplerView | File::LegacyResource)
                && matches!(d.resource, Some(ResourceDecl::SamplerView { .. }))
            {
                views.push(d);
            }
            if let Some(id) = d.array_id {
                arrays.entry((d.file, id)).or_insert(d);
            }
        }
        for ranges in &mut files {
            ranges.finish();
        }
        views.finish();
        Declarations { files, views, arrays }
    }

    /// The declarations of `file`.
    pub fn of(&self, file: File) -> &Ranges<'p> {
        &self.files[file as usize]
    }

    /// The first declaration covering register `index` of `file`.
    pub fn covering(&self, file: File, index: i64) -> Option<&'p Declaration> {
        self.of(file).covering(index, |_| true)
    }

    /// The first sampler-view declaration (SVIEW or legacy RES) covering view `unit`.
    pub fn view(&self, unit: i64) -> Option<&'p Declaration> {
        self.views.covering(unit, |_| true)
    }

    /// The first declaration of `file` with ArrayID `id`.
    pub fn array(&self, file: File, id: u32) -> Option<&'p Declaration> {
        self.arrays.get(&(file, id)).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tgsi::parse;

    fn program(text: &str) -> crate::tgsi::ast::Program {
        parse(text).expect("parses")
    }

    /// The scan the index replaces: first in statement order.
    fn scan<'p>(p: &'p crate::tgsi::ast::Program, file: File, index: i64) -> Option<&'p Declaration> {
        p.declarations().find(|d| d.file == file && (i64::from(d.first)..=i64::from(d.last)).contains(&index))
    }

    #[test]
    fn covering_matches_a_scan_also_with_overlaps() {
        // Overlapping and nested ranges (the checker rejects them, the index still answers
        // like the scan).
        let p = program(
            "FRAG\nDCL TEMP[4..9]\nDCL TEMP[0..20]\nDCL TEMP[2..3]\nDCL TEMP[30]\nDCL TEMP[5]\nDCL IN[3], GENERIC[0]\nEND\n",
        );
        let index = Declarations::new(p.declarations());
        for file in [File::Temp, File::Input, File::Output] {
            for i in -2..40 {
                let want = scan(&p, file, i).map(|d| d.span);
                assert_eq!(index.covering(file, i).map(|d| d.span), want, "{file:?}[{i}]");
            }
        }
        assert_eq!(index.of(File::Temp).span(), (0, 30));
        assert_eq!(index.of(File::Output).span(), (0, 0));
    }

    #[test]
    fn views_and_arrays() {
        let p = program(
            "FRAG\nDCL SVIEW[0..1], 2D, FLOAT\nDCL SVIEW[3], CUBE, UINT\nDCL TEMP[0..3], ARRAY(1)\nDCL TEMP[4..5], ARRAY(2)\nEND\n",
        );
        let index = Declarations::new(p.declarations());
        assert_eq!(index.view(1).map(|d| d.first), Some(0));
        assert_eq!(index.view(2).map(|d| d.first), None);
        assert_eq!(index.view(3).map(|d| d.first), Some(3));
        assert_eq!(index.array(File::Temp, 2).map(|d| d.first), Some(4));
        assert_eq!(index.array(File::Temp, 3).map(|d| d.first), None);
        assert_eq!(index.of(File::Temp).covering(5, |d| d.array_id.is_some()).map(|d| d.last), Some(5));
    }
}
