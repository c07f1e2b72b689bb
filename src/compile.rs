//! The compiler driver: TGSI text → legalised IR variants → (with the back end) a blob.
//!
//! ```text
//! parse ─ check ─ lower ─ optimize ─ [IDVS split: position / varying] ─ legalize ─ cse/dce
//! ```
//!
//! Every stage is one module's public function; the IR verifier runs after each pass in tests
//! and debug builds. `print_after` collects the IR text after the named passes for
//! `tgsi2va compile --print-after`.

use crate::diag::{Diagnostic, Diagnostics};
use crate::emit::meta::Metadata;
use crate::ir::verify::verify_after;
use crate::ir::{Shader, Stage};
use crate::lower::{self, Gpu};
use crate::opt;
use crate::valhall::Opcode;
use crate::valhall::tables::MemoryAccess;

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

/// Parses, checks, lowers, optimises and legalises a TGSI shader.
pub fn compile_to_ir(text: &str, options: &Options) -> Result<IrProgram, Diagnostics> {
    let program = crate::tgsi::parse(text)?;
    let diagnostics = crate::tgsi::check(&program);
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Err(Diagnostics(diagnostics));
    }
    let mut dumps = Vec::new();
    let wants = |pass: &str| options.print_after.iter().any(|p| p == pass || p == "all");
    let record = |pass: &str, name: &str, shader: &Shader, dumps: &mut Vec<(String, String)>| {
        if wants(pass) {
            let title = if name == "main" { pass.to_string() } else { format!("{pass} ({name})") };
            dumps.push((title, crate::ir::text::print(shader)));
        }
    };
    let lowered = lower::lower(&program, &lower::Options { gpu: options.gpu })?;
    let mut shader = lowered.shader;
    verify_after(&shader, "lower");
    record("lower", "main", &shader, &mut dumps);
    let opt_options = opt::Options { contract: options.contract };
    opt::optimize(&mut shader, &opt_options);
    record("optimize", "main", &shader, &mut dumps);
    let mut variants = match shader.stage {
        Stage::Vertex => split_idvs(&shader),
        _ => vec![("main".to_string(), shader)],
    };
    for (name, v) in &mut variants {
        crate::legalize::run(v);
        verify_after(v, "legalize");
        opt::cse::run(v);
        opt::dce::run(v);
        verify_after(v, "legalize cleanup");
        record("legalize", name, v, &mut dumps);
    }
    Ok(IrProgram { variants, meta: lowered.meta, warnings: diagnostics, dumps })
}

/// Mesa's IDVS split (§A.5.3): the position variant keeps the position/point-size/layer stores
/// (`.istream`), the varying variant the others (`.estream`); each is cleaned by DCE. A
/// varying variant without stores is dropped. When point size is written, a third variant
/// without its store follows.
fn split_idvs(shader: &Shader) -> Vec<(String, Shader)> {
    let keep = |shader: &Shader, wanted: MemoryAccess, drop_point_size: bool| -> Shader {
        let mut s = shader.clone();
        for inst in &mut s.insts {
            if inst.dead || !inst.is_machine() || !inst.mach.info().name.starts_with("STORE.") {
                continue;
            }
            let access = inst.mach.get::<MemoryAccess>("memory_access");
            let point_size = inst.mach.opcode == Opcode::STORE_I16;
            if access != Some(wanted) || (drop_point_size && point_size) {
                inst.dead = true;
            }
        }
        s.compact();
        opt::dce::run(&mut s);
        s
    };
    let has_store =
        |s: &Shader| s.insts.iter().any(|i| !i.dead && i.is_machine() && i.mach.info().name.starts_with("STORE."));
    let mut variants = vec![("position".to_string(), keep(shader, MemoryAccess::Istream, false))];
    let varying = keep(shader, MemoryAccess::Estream, false);
    if has_store(&varying) {
        variants.push(("varying".to_string(), varying));
    }
    let writes_point_size =
        shader.insts.iter().any(|i| !i.dead && i.is_machine() && i.mach.opcode == Opcode::STORE_I16);
    if writes_point_size {
        variants.push(("position_no_psiz".to_string(), keep(shader, MemoryAccess::Istream, true)));
    }
    variants
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
    fn check_errors_stop_compilation() {
        let err = compile_to_ir("FRAG\n  0: MOV TEMP[0], TEMP[1]\n  1: END\n", &Options::default()).unwrap_err();
        assert!(err.has_errors());
    }
}
