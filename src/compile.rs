//! The compiler driver: TGSI text → legalised IR variants → blob + metadata.
//!
//! ```text
//! parse ─ check ─ lower ─ optimize ─ sink ─ [IDVS split: position / varying, dead_cf] ─ legalize ─ cse/dce
//!       ─ per variant: regalloc ─ flow ─ encode ─ link (padding, offsets) ─ metadata
//! ```
//!
//! Every stage is one module's public function; the IR verifier runs after each pass in tests
//! and debug builds. `print_after` collects the IR text after the named passes for
//! `tgsi2va compile --print-after`.

use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::emit::blob;
use crate::emit::meta::Metadata;
use crate::ir::verify::verify_after;
use crate::ir::{InstId, Shader, Stage};
use crate::lower::{self, Gpu};
use crate::opt;
use crate::valhall::Opcode;
use crate::valhall::tables::MemoryAccess;
use smallvec::SmallVec;
use std::time::{Duration, Instant};

/// Compilation options.
#[derive(Clone, Debug)]
pub struct Options {
    pub gpu: Gpu,
    /// Contract multiply-add pairs into FMA (changes rounding; `verify` turns it off).
    pub contract: bool,
    /// Passes after which to record the IR (`all` for every pass).
    pub print_after: Vec<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options { gpu: Gpu::DEFAULT, contract: true, print_after: Vec::new() }
    }
}

/// The IR of every variant, ready for register allocation.
#[derive(Clone, Debug)]
pub struct IrProgram {
    /// (variant name, shader) in blob order.
    pub variants: Vec<(String, Shader)>,
    pub meta: Metadata,
    /// Warnings from the checker.
    pub warnings: Vec<Diagnostic>,
    /// (pass, IR text) for the passes asked for by `print_after`.
    pub dumps: Vec<(String, String)>,
}

/// Time spent in each stage of one compilation ([`compile_timed`], for the benchmark).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimes {
    pub parse_check: Duration,
    pub lower: Duration,
    pub optimize: Duration,
    /// IDVS split, legalisation and its clean-up.
    pub legalize: Duration,
    pub regalloc: Duration,
    /// Flow passes, encoding, linking, metadata and listings.
    pub flow_emit: Duration,
}

impl StageTimes {
    pub fn add(&mut self, other: &StageTimes) {
        self.parse_check += other.parse_check;
        self.lower += other.lower;
        self.optimize += other.optimize;
        self.legalize += other.legalize;
        self.regalloc += other.regalloc;
        self.flow_emit += other.flow_emit;
    }
}

/// A stopwatch that costs one branch per stage when off.
struct Laps<'a> {
    times: Option<(&'a mut StageTimes, Instant)>,
}

impl Laps<'_> {
    /// Adds the time since the previous lap to the stage `field` selects.
    fn lap(&mut self, field: fn(&mut StageTimes) -> &mut Duration) {
        if let Some((times, last)) = &mut self.times {
            let now = Instant::now();
            *field(times) += now - *last;
            *last = now;
        }
    }
}

/// Parses, checks, lowers, optimises and legalises a TGSI shader.
pub fn compile_to_ir(text: &str, options: &Options) -> Result<IrProgram, Diagnostics> {
    compile_to_ir_laps(text, options, &mut Laps { times: None })
}

fn compile_to_ir_laps(text: &str, options: &Options, laps: &mut Laps) -> Result<IrProgram, Diagnostics> {
    let program = crate::tgsi::parse(text)?;
    let diagnostics = crate::tgsi::check(&program);
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Err(Diagnostics(diagnostics));
    }
    laps.lap(|t| &mut t.parse_check);
    let mut dumps = Vec::new();
    let wants = |pass: &str| options.print_after.iter().any(|p| p == pass || p == "all");
    let record = |pass: &str, name: &str, shader: &Shader, dumps: &mut Vec<(String, String)>| {
        if wants(pass) {
            let title = if name == "main" { pass.to_string() } else { format!("{pass} ({name})") };
            dumps.push((title, crate::ir::text::print(shader)));
        }
    };
    let lowered = lower::lower(&program, &lower::Options { gpu: options.gpu })?;
    crate::tgsi::parse::recycle(program);
    let mut shader = lowered.shader;
    verify_after(&shader, "lower");
    record("lower", "main", &shader, &mut dumps);
    laps.lap(|t| &mut t.lower);
    let opt_options = opt::Options { contract: options.contract };
    let mut analyses = opt::optimize(&mut shader, &opt_options);
    // Only the constant-buffer loads lowering put in the entry block move.
    if lowered.hoisted_loads && opt::sink::run(&mut shader, &mut analyses) {
        verify_after(&shader, "sink");
    }
    record("optimize", "main", &shader, &mut dumps);
    laps.lap(|t| &mut t.optimize);
    let (mut variants, cfg_changed) = match shader.stage {
        Stage::Vertex => split_idvs(shader),
        _ => (vec![("main".to_string(), shader)], false),
    };
    for (name, v) in &mut variants {
        if cfg_changed {
            // The variants' CFGs differ from the optimiser's and from each other's.
            analyses.cfg_changed();
        }
        crate::legalize::run(v);
        verify_after(v, "legalize");
        // CSE runs here rather than in the optimiser: legalisation adds copies of constants
        // and FAU words and can make constants equal (`#c.neg` and `#-c`). Neither creates
        // dead code when their input had none (a test checks every sample): DCE is needed only
        // if the optimiser stopped before its fixed point. The dominator tree is shared unless
        // the split removed control flow; neither pass changes the CFG.
        opt::cse::run_in(v, &mut analyses);
        if !analyses.converged() {
            opt::dce::run(v);
        }
        verify_after(v, "legalize cleanup");
        record("legalize", name, v, &mut dumps);
    }
    laps.lap(|t| &mut t.legalize);
    Ok(IrProgram { variants, meta: lowered.meta, warnings: diagnostics, dumps })
}

/// A compiled shader.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The blob: every variant, 128-byte aligned and padded.
    pub blob: Vec<u8>,
    pub meta: Metadata,
    pub warnings: Vec<Diagnostic>,
    /// (pass, text) dumps asked for by `print_after`.
    pub dumps: Vec<(String, String)>,
}

/// Compiles TGSI text to a Valhall blob with its metadata.
pub fn compile(text: &str, options: &Options) -> Result<Compiled, Diagnostics> {
    compile_laps(text, options, &mut Laps { times: None })
}

/// [`compile`], also returning the time spent in each stage.
pub fn compile_timed(text: &str, options: &Options) -> (Result<Compiled, Diagnostics>, StageTimes) {
    let mut times = StageTimes::default();
    let result = compile_laps(text, options, &mut Laps { times: Some((&mut times, Instant::now())) });
    (result, times)
}

fn compile_laps(text: &str, options: &Options, laps: &mut Laps) -> Result<Compiled, Diagnostics> {
    let ir = compile_to_ir_laps(text, options, laps)?;
    let mut dumps = ir.dumps;
    let mut meta = ir.meta;
    let backend = blob::Options::default();
    let mut compiled = Vec::with_capacity(ir.variants.len());
    for (name, shader) in ir.variants {
        let failed = |e: blob::Error| {
            Diagnostics::from(
                Diagnostic::error("E0390", Span::default(), format!("the back end failed on the {name} variant: {e}"))
                    .with_note("this is a bug in tgsi2va; please report it with the input file"),
            )
        };
        let alloc = crate::regalloc::allocate_owned(shader, &backend.regalloc).map_err(|e| failed(e.into()))?;
        laps.lap(|t| &mut t.regalloc);
        let c = blob::finish(alloc).map_err(failed)?;
        laps.lap(|t| &mut t.flow_emit);
        if options.print_after.iter().any(|p| p == "backend" || p == "all") {
            let title = if name == "main" { "backend".to_string() } else { format!("backend ({name})") };
            dumps.push((title, c.assembly()));
        }
        compiled.push((name, c));
    }
    let parts: Vec<(&str, &[u8], &blob::VariantInfo)> =
        compiled.iter().map(|(n, c)| (n.as_str(), c.code.as_slice(), &c.info)).collect();
    let (bytes, variants) = blob::link(&parts);
    meta.variants = variants;
    meta.tls_size = compiled.iter().map(|(_, c)| c.info.tls_size).max().unwrap_or(0).max(meta.tls_size);
    laps.lap(|t| &mut t.flow_emit);
    Ok(Compiled { blob: bytes, meta, warnings: ir.warnings, dumps })
}

impl Compiled {
    /// Each variant's program in Mesa's assembly syntax (name, text, one instruction per line),
    /// in blob order. Disassembled from the blob when asked for: most compiles never need it.
    pub fn listings(&self) -> Vec<(String, String)> {
        let listing = |v: &crate::emit::meta::Variant| {
            let code = self.blob.get(v.offset as usize..(v.offset + v.size) as usize).unwrap_or(&[]);
            let mut text = String::new();
            for chunk in code.chunks_exact(8) {
                let word = u64::from_le_bytes(chunk.try_into().expect("8-byte chunk"));
                match crate::valhall::disasm::disassemble_word(word) {
                    Ok(line) => text.push_str(&line),
                    // Our own output always decodes; say so rather than panic if it ever does not.
                    Err(e) => text.push_str(&format!("# undecodable word {word:#018x}: {e}")),
                }
                text.push('\n');
            }
            text
        };
        self.meta.variants.iter().map(|v| (v.name.clone(), listing(v))).collect()
    }
}

/// Mesa's IDVS split (§A.5.3): the position variant keeps the position/point-size/layer stores
/// (`.istream`), the varying variant the others (`.estream`); each is cleaned by
/// [`opt::dead_cf`], which also removes the control flow that only fed the dropped stores. A
/// varying variant without stores is dropped. When point size is written, a third variant
/// without its store follows. The last variant built takes `shader` itself (one clone fewer).
/// Also says whether some variant's CFG differs from the shader's.
fn split_idvs(shader: Shader) -> (Vec<(String, Shader)>, bool) {
    /// A store of the shader: its instruction, memory access and whether it writes point size.
    #[derive(Clone, Copy)]
    struct Store {
        id: InstId,
        access: Option<MemoryAccess>,
        point_size: bool,
    }
    // The stores are found once: each variant only marks the ones it drops (a variant's
    // arena is a copy of the shader's, so the ids hold in every variant).
    let mut stores: SmallVec<[Store; 8]> = SmallVec::new();
    for (i, inst) in shader.insts.iter().enumerate() {
        if !inst.dead && inst.is_machine() && inst.mach.opcode.is_store() {
            let access = inst.mach.get::<MemoryAccess>("memory_access");
            let point_size = inst.mach.opcode == Opcode::STORE_I16;
            stores.push(Store { id: InstId(i as u32), access, point_size });
        }
    }
    let mut cfg_changed = false;
    let mut keep = |mut s: Shader, wanted: MemoryAccess, drop_point_size: bool| -> Shader {
        for store in &stores {
            if store.access != Some(wanted) || (drop_point_size && store.point_size) {
                s.insts[store.id.index()].dead = true;
            }
        }
        s.compact();
        cfg_changed |= opt::dead_cf::run_reporting(&mut s).control_flow;
        s
    };
    // DCE keeps stores (they have side effects): a variant keeps exactly the stores it did not drop.
    let has_store = |s: &Shader| stores.iter().any(|store| !s.inst(store.id).dead);
    let writes_point_size = stores.iter().any(|store| store.point_size);
    let mut variants = Vec::with_capacity(if writes_point_size { 3 } else { 2 });
    variants.push(("position".to_string(), keep(shader.clone(), MemoryAccess::Istream, false)));
    let (varying, no_point_size) = if writes_point_size {
        let varying = keep(shader.clone(), MemoryAccess::Estream, false);
        (varying, Some(keep(shader, MemoryAccess::Istream, true)))
    } else {
        (keep(shader, MemoryAccess::Estream, false), None)
    };
    if has_store(&varying) {
        variants.push(("varying".to_string(), varying));
    }
    if let Some(v) = no_point_size {
        variants.push(("position_no_psiz".to_string(), v));
    }
    (variants, cfg_changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertex_shaders_split_into_idvs_variants() {
        let text = "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\nDCL OUT[1], GENERIC[0]\n  0: MOV OUT[0], IN[0]\n  1: MOV OUT[1], IN[0].wzyx\n  2: END\n";
        let ir = compile_to_ir(text, &Options::default()).unwrap();
        let names: Vec<&str> = ir.variants.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["position", "varying"]);
        let position = crate::ir::text::print(&ir.variants[0].1);
        assert!(position.contains("istream") && !position.contains("estream"), "{position}");
        assert!(position.contains("FRCP"), "the position variant transforms the position: {position}");
        let varying = crate::ir::text::print(&ir.variants[1].1);
        assert!(varying.contains("estream") && !varying.contains("FRCP"), "{varying}");
    }

    /// An `if`/`else` whose arms the optimiser empties (both read undefined temporaries, which
    /// are zero) leaves no branch in a fragment shader (`opt::select`).
    #[test]
    fn fragment_shaders_lose_ifs_the_optimiser_emptied() {
        let text = "FRAG\nDCL OUT[0], COLOR\nDCL CONST[0]\nDCL TEMP[0..2], LOCAL\n  0: IF CONST[0].xxxx\n  1:   MOV TEMP[0], TEMP[1]\n  2: ELSE\n  3:   MOV TEMP[0], TEMP[2]\n  4: ENDIF\n  5: MOV OUT[0], TEMP[0]\n  6: END\n";
        let ir = compile_to_ir(text, &Options::default()).unwrap();
        let main = &ir.variants[0].1;
        assert_eq!(main.blocks.len(), 1, "{}", crate::ir::text::print(main));
        // An `if` with an effect in an arm stays.
        let kept = text.replace("MOV TEMP[0], TEMP[2]", "KILL");
        let ir = compile_to_ir(&kept, &Options::default()).unwrap();
        assert!(ir.variants[0].1.blocks.len() > 1);
    }

    /// A loop and an `if` that only compute a varying are gone from the position variant (one
    /// block left), and stay in the varying variant.
    #[test]
    fn the_position_variant_drops_control_flow_only_varyings_need() {
        let text = "VERT
DCL IN[0]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL CONST[0]
DCL TEMP[0..1]
IMM[0] FLT32 { 1.0, 0.0, 0.0, 0.0 }
  0: MOV TEMP[0], IN[0]
  1: MOV TEMP[1].x, IMM[0].yyyy
  2: BGNLOOP :0
  3:   SGE TEMP[1].y, TEMP[1].xxxx, CONST[0].xxxx
  4:   IF TEMP[1].yyyy :0
  5:     BRK
  6:   ENDIF
  7:   MUL TEMP[0], TEMP[0], TEMP[0]
  8:   ADD TEMP[1].x, TEMP[1].xxxx, IMM[0].xxxx
  9: ENDLOOP :0
 10: MOV OUT[0], IN[0]
 11: MOV OUT[1], TEMP[0]
 12: END
";
        let ir = compile_to_ir(text, &Options::default()).unwrap();
        let (position, varying) = (&ir.variants[0].1, &ir.variants[1].1);
        assert_eq!(position.blocks.len(), 1, "{}", crate::ir::text::print(position));
        assert!(varying.blocks.len() > 2, "{}", crate::ir::text::print(varying));
    }

    #[test]
    fn print_after_collects_dumps() {
        let text = "FRAG\nDCL OUT[0], COLOR\n  0: MOV OUT[0], IMM[0]\n  1: END\nIMM[0] FLT32 {    1.0000,     0.5000,     0.0000,     1.0000}\n";
        let options = Options { print_after: vec!["all".into()], ..Options::default() };
        let ir = compile_to_ir(text, &options).unwrap();
        let passes: Vec<&str> = ir.dumps.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(passes, ["lower", "optimize", "legalize"]);
        assert!(ir.dumps[2].1.contains("BLEND"), "{}", ir.dumps[2].1);
    }

    #[test]
    fn fragment_shader_compiles_to_a_blob() {
        let text = "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\n  0: MOV OUT[0], IN[0]\n  1: END\n";
        let c = compile(text, &Options::default()).unwrap();
        assert_eq!(c.meta.variants.len(), 1);
        assert_eq!(c.blob.len() % 128, 0);
        let listing = &c.listings()[0].1;
        assert!(
            listing.contains("LD_VAR_BUF_IMM") && listing.contains("ATEST") && listing.contains("BLEND"),
            "{listing}"
        );
        assert!(listing.lines().any(|l| l.contains(".end")), "{listing}");
        // The blob decodes back to the listing.
        let words: Vec<u64> =
            c.blob.chunks(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).take_while(|&w| w != 0).collect();
        let printed: Vec<String> = words.iter().map(|&w| crate::valhall::disassemble_word(w).unwrap()).collect();
        assert_eq!(printed.join("\n") + "\n", *listing);
    }

    #[test]
    fn buffers_kept_between_compiles_do_not_change_the_output() {
        // On one thread, a compile takes the arenas and statement list the previous one left
        // (`crate::reuse`): a vertex shader (three shaders alive at once), then a larger
        // fragment shader, then the first again, which must come out the same.
        let read = |name: &str| {
            std::fs::read_to_string(format!("{}/tgsi-samples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
        };
        let (vertex, fragment) = (read("realistic/ui.vert.tgsi"), read("realistic/postfx-grade.frag.tgsi"));
        let blob = |text: &str| {
            let c = compile(text, &Options::default()).unwrap();
            (c.blob, c.meta)
        };
        let first = blob(&vertex);
        assert_eq!(first.1.variants.len(), 2, "both IDVS variants");
        let _ = blob(&fragment);
        assert_eq!(blob(&vertex), first);
    }

    #[test]
    fn check_errors_stop_compilation() {
        let err = compile_to_ir("FRAG\n  0: MOV TEMP[0], TEMP[1]\n  1: END\n", &Options::default()).unwrap_err();
        assert!(err.has_errors());
    }
}
