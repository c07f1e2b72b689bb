//! `tgsi2va compile INPUT... [-o OUT|-] [--out-dir DIR] [--emit FORMAT] [--gpu G]
//! [--stats[=line|table]] [--print-after PASS|all] [--no-meta]`.
//!
//! * One input without `-o`/`--out-dir`: the assembly listing goes to standard output.
//! * `-o OUT` (one input): the format comes from `--emit`, else from OUT's extension (`.bin`,
//!   `.s`/`.asm`, `.hex`, `.json`, `.c`/`.h`, `.ir`); a `.bin` also gets its metadata in
//!   `OUT` with `.json` unless `--no-meta`. `-o -` writes to standard output.
//! * `--out-dir DIR`: one output per input, named after the input.
//! * Several inputs without an output: compile only, and report `N passed, N failed`.
//!
//! Outputs are written atomically: a failed compile leaves no file behind.

use super::Global;
use super::batch::{self, Outcome};
use super::output::{is_special_file, write_output};
use clap::ValueEnum;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tgsi2va::compile::{self, Compiled};
use tgsi2va::lower::Gpu;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// The blob (code and padding of every variant).
    Bin,
    /// Mesa-syntax assembly, one instruction per line (re-assembles with `tgsi2va asm`).
    Asm,
    /// Mesa's verbose listing: eight bytes, then the instruction.
    Hex,
    /// The metadata only.
    Json,
    /// A C array of the blob with the variant offsets.
    C,
    /// The IR after legalisation (for debugging).
    Ir,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StatsFormat {
    /// Mesa's shader-db line per variant.
    Line,
    /// An aligned table per variant.
    Table,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// TGSI files or directories (searched for *.tgsi); `-` is standard input.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,

    /// Output file (`-` for standard output); only with one input.
    #[arg(short, long, conflicts_with = "out_dir")]
    output: Option<PathBuf>,

    /// Directory for one output per input.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,

    /// Output format (default: from the output's extension, else `bin` for --out-dir and
    /// `asm` for standard output).
    #[arg(long, value_enum)]
    emit: Option<Emit>,

    /// Target: v9, v10, G57, Mali-G610, … (default v9 / Mali-G57).
    #[arg(long, default_value = "v9", value_parser = parse_gpu)]
    gpu: Gpu,

    /// Print statistics per variant (to standard error).
    #[arg(long, value_enum, num_args = 0..=1, require_equals = true, default_missing_value = "line")]
    stats: Option<StatsFormat>,

    /// Print the IR after a pass (lower, optimize, legalize, backend, or all), to standard error.
    #[arg(long, value_name = "PASS")]
    print_after: Vec<String>,

    /// Do not write the metadata beside a `.bin` output.
    #[arg(long)]
    no_meta: bool,

    /// Do not contract multiply-add pairs into FMA (bit-exact with separate rounding).
    #[arg(long)]
    no_contract: bool,
}

fn parse_gpu(text: &str) -> Result<Gpu, String> {
    Gpu::parse(text).ok_or_else(|| {
        let names: Vec<&str> = Gpu::ALL.iter().map(|g| g.name).collect();
        format!("unknown GPU `{text}`: use v9, v10 or one of {}", names.join(", "))
    })
}

pub fn run(args: Args, global: Global) -> ExitCode {
    let found = match batch::collect_inputs_relative(&args.inputs, "tgsi") {
        Ok(found) => found,
        Err(message) => return super::usage_error(message),
    };
    let inputs: Vec<PathBuf> = found.iter().map(|(path, _)| path.clone()).collect();
    // Under --out-dir each output keeps its input's path relative to the directory argument
    // it was found under, so `fs/a.tgsi` and `vs/a.tgsi` do not overwrite each other.
    let mut targets: HashMap<PathBuf, PathBuf> = HashMap::new();
    if let Some(dir) = &args.out_dir {
        let ext = extension(args.emit.unwrap_or(Emit::Bin));
        let mut seen: HashMap<PathBuf, &Path> = HashMap::new();
        for (path, relative) in &found {
            let stem = relative.file_stem().map_or("stdin".into(), |s| s.to_string_lossy().into_owned());
            let out = dir.join(relative.with_file_name(format!("{stem}.{ext}")));
            if let Some(other) = seen.insert(out.clone(), path) {
                return super::usage_error(format!(
                    "{} and {} would both be written to {}",
                    other.display(),
                    path.display(),
                    out.display()
                ));
            }
            targets.insert(path.clone(), out);
        }
    }
    if args.output.is_some() && inputs.len() > 1 {
        return super::usage_error("-o takes one input; use --out-dir for several");
    }
    const PASSES: [&str; 5] = ["lower", "optimize", "legalize", "backend", "all"];
    if let Some(bad) = args.print_after.iter().find(|p| !PASSES.contains(&p.as_str())) {
        return super::usage_error(format!("unknown pass `{bad}`: use one of {}", PASSES.join(", ")));
    }
    for out in targets.values() {
        let parent = out.parent().unwrap_or(Path::new("."));
        if let Err(e) = std::fs::create_dir_all(parent) {
            return super::usage_error(format!("cannot create directory {}: {e}", parent.display()));
        }
    }
    let listing_to_stdout = args.output.is_none() && args.out_dir.is_none() && inputs.len() == 1;
    let summary = inputs.len() > 1;
    batch::run(&inputs, summary, |path| compile_one(path, targets.get(path), &args, global, listing_to_stdout))
}

fn compile_one(
    path: &Path,
    out_dir_target: Option<&PathBuf>,
    args: &Args,
    global: Global,
    listing_to_stdout: bool,
) -> Outcome {
    let text = match batch::read_text(path) {
        Ok(text) => text,
        Err(message) => return Outcome::fail(message),
    };
    let name = batch::display_name(path);
    let options =
        compile::Options { gpu: args.gpu, contract: !args.no_contract, print_after: args.print_after.clone() };
    let compiled = match compile::compile(&text, &options) {
        Ok(c) => c,
        Err(errors) => return Outcome::fail(global.render(&errors.0, &name, &text)),
    };
    let mut stderr = String::new();
    if !compiled.warnings.is_empty() {
        stderr.push_str(&global.render(&compiled.warnings, &name, &text));
    }
    for (pass, dump) in &compiled.dumps {
        let _ = writeln!(stderr, "# {name}: IR after {pass}\n{dump}");
    }
    if let Some(format) = args.stats {
        stderr.push_str(&stats(&name, &compiled, format));
    }
    let mut stdout = String::new();
    let target = match (&args.output, &args.out_dir) {
        (Some(out), _) => Some(out.clone()),
        (None, Some(_)) => out_dir_target.cloned(),
        (None, None) => None,
    };
    match target {
        None if listing_to_stdout => match render(&compiled, args.emit.unwrap_or(Emit::Asm), &text, &options) {
            Ok(bytes) if args.emit == Some(Emit::Bin) => {
                if let Err(m) = write_output(Path::new("-"), &bytes) {
                    return Outcome::fail(format!("error: {m}\n"));
                }
            }
            Ok(bytes) => stdout.push_str(&String::from_utf8_lossy(&bytes)),
            Err(m) => return Outcome::fail(format!("{stderr}error: {m}\n")),
        },
        None => {}
        Some(out) => {
            let format = args.emit.unwrap_or_else(|| format_of(&out));
            let bytes = match render(&compiled, format, &text, &options) {
                Ok(b) => b,
                Err(m) => return Outcome::fail(format!("{stderr}error: {m}\n")),
            };
            if let Err(m) = write_output(&out, &bytes) {
                return Outcome::fail(format!("{stderr}error: {m}\n"));
            }
            if format == Emit::Bin && !args.no_meta && out != Path::new("-") && !is_special_file(&out) {
                let meta = out.with_extension("json");
                if let Err(m) = write_output(&meta, compiled.meta.to_json().as_bytes()) {
                    // A blob without its metadata is a partial result: take it back.
                    let _ = std::fs::remove_file(&out);
                    return Outcome::fail(format!("{stderr}error: {m}\n"));
                }
            }
        }
    }
    Outcome { passed: true, stdout, stderr, internal_error: false, inconclusive: false }
}

fn extension(format: Emit) -> &'static str {
    match format {
        Emit::Bin => "bin",
        Emit::Asm => "s",
        Emit::Hex => "hex",
        Emit::Json => "json",
        Emit::C => "c",
        Emit::Ir => "ir",
    }
}

fn format_of(out: &Path) -> Emit {
    match out.extension().and_then(|e| e.to_str()) {
        Some("s" | "asm") => Emit::Asm,
        Some("hex" | "txt") => Emit::Hex,
        Some("json") => Emit::Json,
        Some("c" | "h") => Emit::C,
        Some("ir") => Emit::Ir,
        _ if out == Path::new("-") => Emit::Asm,
        _ => Emit::Bin,
    }
}

fn render(c: &Compiled, format: Emit, text: &str, options: &compile::Options) -> Result<Vec<u8>, String> {
    Ok(match format {
        Emit::Bin => c.blob.clone(),
        Emit::Json => c.meta.to_json().into_bytes(),
        Emit::Asm => {
            let mut out = String::new();
            for (variant, (name, listing)) in c.meta.variants.iter().zip(c.listings()) {
                let _ = writeln!(
                    out,
                    "# {name}: offset {}, {} bytes, {} work registers",
                    variant.offset, variant.size, variant.work_registers
                );
                out.push_str(&listing);
            }
            out.into_bytes()
        }
        Emit::Hex => {
            let mut out = String::new();
            for variant in &c.meta.variants {
                let code = &c.blob[variant.offset as usize..(variant.offset + variant.size) as usize];
                let _ = writeln!(out, "# {}: offset {}", variant.name, variant.offset);
                let listing = tgsi2va::valhall::listing(
                    code,
                    tgsi2va::valhall::ListingOptions { hex: true, ..Default::default() },
                );
                out.push_str(&listing.text);
            }
            out.into_bytes()
        }
        Emit::C => {
            let mut out = String::from("/* Generated by tgsi2va. */\n#include <stdint.h>\n\n");
            for v in &c.meta.variants {
                let _ = writeln!(out, "#define SHADER_{}_OFFSET {}", v.name.to_ascii_uppercase(), v.offset);
            }
            let _ = writeln!(out, "\nstatic const uint8_t shader[{}] = {{", c.blob.len());
            for chunk in c.blob.chunks(16) {
                let bytes: Vec<String> = chunk.iter().map(|b| format!("0x{b:02x}")).collect();
                let _ = writeln!(out, "    {},", bytes.join(", "));
            }
            out.push_str("};\n");
            out.into_bytes()
        }
        Emit::Ir => {
            let ir = compile::compile_to_ir(text, options).map_err(|e| e.to_string())?;
            let mut out = String::new();
            for (name, shader) in &ir.variants {
                let _ = writeln!(out, "# {name}");
                out.push_str(&tgsi2va::ir::text::print(shader));
            }
            out.into_bytes()
        }
    })
}

fn stats(name: &str, c: &Compiled, format: StatsFormat) -> String {
    let mut out = String::new();
    for v in &c.meta.variants {
        match format {
            StatsFormat::Line => {
                let _ = writeln!(
                    out,
                    "{name} - {} {} shader: {}",
                    c.meta.stage,
                    v.name,
                    tgsi2va::emit::stats::line(&v.stats)
                );
            }
            StatsFormat::Table => {
                let s = &v.stats;
                let _ = writeln!(out, "{name} ({} {})", c.meta.stage, v.name);
                let rows = [
                    ("instructions", s.instructions.to_string()),
                    ("cycles", format!("{:.6}", s.cycles)),
                    ("fma", format!("{:.6}", s.fma)),
                    ("cvt", format!("{:.6}", s.cvt)),
                    ("sfu", format!("{:.6}", s.sfu)),
                    ("v", format!("{:.6}", s.v)),
                    ("t", format!("{:.6}", s.t)),
                    ("ls", format!("{:.6}", s.ls)),
                    ("quadwords", s.quadwords.to_string()),
                    ("threads", s.threads.to_string()),
                    ("loops", s.loops.to_string()),
                    ("spills:fills", format!("{}:{}", s.spills, s.fills)),
                ];
                for (k, v) in rows {
                    let _ = writeln!(out, "  {k:<14}{v:>12}");
                }
            }
        }
    }
    out
}
