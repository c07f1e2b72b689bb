//! Full-compile throughput (parse + check + lower + optimise + legalise + register allocation +
//! flow + emit): per sample shader (in rotation, one shader at a time, and each shader's 1st to
//! 4th compile in a row), in batch on all cores, per pipeline stage, and over a sweep
//! of generated shaders of growing size with their peak memory (run with
//! `cargo bench --bench compile`).
//!
//! Times are CPU time of the benchmark thread (Linux `/proc/thread-self/schedstat`, in ns), so
//! that other work on a shared machine does not distort them; wall time elsewhere.
//!
//! Environment: `TGSI_BENCH_QUICK=1` shortens every measurement; `TGSI_BENCH_SIZES=250,1000`
//! picks the sweep sizes; `TGSI_BENCH_DUMP=DIR` writes the generated shaders to DIR and exits;
//! `TGSI_BENCH_PROFILE=ROUNDS` only compiles the samples (or, with `TGSI_BENCH_SIZES`, the
//! generated shaders) that many times, for a profiler or `perf stat`; `TGSI_BENCH_ONLY=TEXT` then
//! keeps only the samples whose path contains TEXT, and `TGSI_BENCH_FILE=PATH` compiles that one
//! file instead (`benches/per-compile.sh` uses it to count what one compile costs), and
//! `TGSI_BENCH_REPEAT=K` compiles each text K times in a row before the next (the same work as
//! rotation with a trained branch predictor, for comparing the two under `perf record`).
//! `TGSI_BENCH_DIR=PATH` takes the samples from PATH (every `.tgsi` below it) instead of
//! `tgsi-samples/`, for the sample measurements and `TGSI_BENCH_PROFILE` alike.
//! `TGSI_BENCH_TSV=PATH` writes each compiled file's median times (rotation, one shader at a
//! time) to PATH as tab-separated rows.

#[path = "common/mod.rs"]
mod common;
use common::{collect_tgsi, thread_cpu};
use rayon::prelude::*;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tgsi2va::compile::{self, Options, StageTimes};

/// One 40-statement group of a fragment shader: vector ALU, texture samples, an if/else with
/// an indirect constant read, a loop with a break, transcendental and saturated operations.
/// `g` varies the registers, constants and swizzles.
fn group(g: usize, out: &mut Vec<String>) {
    let t = g % 14;
    let u = (g * 5 + 3) % 14;
    let w = (g * 11 + 7) % 14;
    let c = g % 60;
    let sw = ["xyzw", "yzwx", "wzyx", "xxyy", "zwxy"][g % 5];
    let lines = [
        format!("MUL TEMP[{t}].xyz, TEMP[{u}].{sw}, CONST[0][{c}].xxxx"),
        format!("TEX TEMP[{w}], TEMP[{u}], SAMP[0], 2D"),
        format!("MAD TEMP[{t}], TEMP[{u}], IMM[0].xxxx, -TEMP[{w}].wwww"),
        format!("DP3 TEMP[{u}].x, TEMP[{t}].xyzz, IMM[1].xyzz"),
        format!("ADD TEMP[{w}].xy, TEMP[{w}].{sw}, CONST[0][{}].zwww", c + 1),
        format!("FSLT TEMP[14].x, TEMP[{u}].xxxx, IMM[0].zzzz"),
        "UIF TEMP[14].xxxx".to_string(),
        format!("  LRP TEMP[{t}].xyz, TEMP[{u}].wwww, TEMP[{t}].xyzz, IN[2].xyzz"),
        format!("  ARL ADDR[0].x, TEMP[{w}].yyyy"),
        format!("  MOV TEMP[{u}], CONST[0][ADDR[0].x+{}]", c % 32),
        format!("  MUL TEMP[{t}], TEMP[{t}], TEMP[{u}]"),
        "ELSE".to_string(),
        format!("  TEX TEMP[{u}], TEMP[{t}].xyyy, SAMP[1], 2D"),
        format!("  MAX TEMP[{t}].xyz, TEMP[{u}].xyzz, IMM[0].zzzz"),
        "ENDIF".to_string(),
        format!("ADD_SAT TEMP[{w}].w, |TEMP[{t}].xxxx|, IMM[0].yyyy"),
        format!("RSQ TEMP[{u}].x, |TEMP[{w}].wwww|"),
        format!("MUL TEMP[{t}].xyz, TEMP[{t}].xyzz, TEMP[{u}].xxxx"),
        format!("MIN TEMP[{w}], TEMP[{w}], TEMP[{t}].{sw}"),
        "MOV TEMP[15].x, IMM[0].zzzz".to_string(),
        "BGNLOOP".to_string(),
        "  FSGE TEMP[14].x, TEMP[15].xxxx, IMM[0].wwww".to_string(),
        "  UIF TEMP[14].xxxx".to_string(),
        "    BRK".to_string(),
        "  ENDIF".to_string(),
        format!("  TXL TEMP[{u}], TEMP[{t}].xyyx, SAMP[0], 2D"),
        format!("  MAD TEMP[{w}], TEMP[{u}], CONST[0][{}], TEMP[{w}]", c + 2),
        "  ADD TEMP[15].x, TEMP[15].xxxx, IMM[0].yyyy".to_string(),
        "ENDLOOP".to_string(),
        format!("FRC TEMP[{t}].xy, TEMP[{w}].{sw}"),
        format!("SGE TEMP[{u}], TEMP[{t}], TEMP[{w}].wzyx"),
        format!("DP4 TEMP[{w}].y, TEMP[{t}], CONST[0][{}]", c + 3),
        format!("EX2 TEMP[{t}].w, TEMP[{w}].yyyy"),
        format!("CMP TEMP[{u}], -TEMP[{t}], TEMP[{w}], IMM[0].zzzz"),
        format!("MAD TEMP[{t}], TEMP[{u}].{sw}, CONST[0][{}], -TEMP[{t}]", c + 4),
        format!("ADD TEMP[{w}].xyz, TEMP[{w}].xyzz, TEMP[{t}].wwww"),
        format!("MUL TEMP[{u}].zw, TEMP[{t}].yyxx, IMM[1].xxyy"),
        format!("FRC TEMP[{w}].z, TEMP[{u}].zzzz"),
        format!("MAX TEMP[{t}].x, TEMP[{t}].xxxx, TEMP[{w}].zzzz"),
        format!("MOV_SAT TEMP[{u}].y, TEMP[{t}].xxxx"),
    ];
    out.extend(lines);
}

/// A fragment shader of about `instructions` TGSI statements (whole groups, at least one).
fn synthetic(instructions: usize) -> String {
    let mut s = String::from("FRAG\n");
    s.push_str("DCL IN[0], POSITION, LINEAR\nDCL IN[1], GENERIC[0], PERSPECTIVE\nDCL IN[2], GENERIC[1], PERSPECTIVE\n");
    s.push_str("DCL OUT[0], COLOR\nDCL SAMP[0]\nDCL SAMP[1]\nDCL SVIEW[0], 2D, FLOAT\nDCL SVIEW[1], 2D, FLOAT\n");
    s.push_str("DCL CONST[0][0..63]\nDCL TEMP[0..15], LOCAL\nDCL ADDR[0]\n");
    s.push_str("IMM[0] FLT32 {    0.5000,     1.0000,     0.0000,     2.0000}\n");
    s.push_str("IMM[1] FLT32 {    0.2126,     0.7152,     0.0722,    -1.0000}\n");
    let mut body: Vec<String> = (0..14).map(|k| format!("MOV TEMP[{k}], IN[{}]", 1 + k % 2)).collect();
    let mut g = 0;
    while body.len() + 2 < instructions || g == 0 {
        group(g, &mut body);
        g += 1;
    }
    body.push("MOV OUT[0], TEMP[0]".to_string());
    body.push("END".to_string());
    for (i, line) in body.iter().enumerate() {
        s.push_str(&format!("{i:3}: {line}\n"));
    }
    s
}

/// Statements in a TGSI text (numbered lines).
fn statements(text: &str) -> usize {
    text.lines().filter(|l| l.split_once(':').is_some_and(|(n, _)| n.trim().parse::<u32>().is_ok())).count()
}

/// Measures `f` run in a loop for about `budget` (at least `min_runs` times): seconds per run,
/// CPU time of this thread where available.
fn per_run(budget: Duration, min_runs: usize, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    let cpu = thread_cpu();
    let mut runs = 0;
    while runs < min_runs || start.elapsed() < budget {
        f();
        runs += 1;
    }
    let wall = start.elapsed().as_secs_f64();
    let seconds = match (cpu, thread_cpu()) {
        (Some(a), Some(b)) => b - a,
        _ => wall,
    };
    seconds / runs as f64
}

fn quick() -> bool {
    std::env::var_os("TGSI_BENCH_QUICK").is_some()
}

fn budget(seconds: f64) -> Duration {
    Duration::from_secs_f64(if quick() { seconds / 5.0 } else { seconds })
}

/// Peak resident memory of this process in KiB (`VmHWM`).
fn peak_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// In a child process: compiles one generated shader once and prints its peak memory.
fn child(size: usize) {
    let text = synthetic(size);
    let before = peak_kib().unwrap_or(0);
    let c = compile::compile(&text, &Options::default()).expect("the generated shader compiles");
    black_box(&c);
    println!("{} {}", before, peak_kib().unwrap_or(0));
}

fn child_peak(size: usize) -> Option<(u64, u64)> {
    let exe = std::env::current_exe().ok()?;
    let out = std::process::Command::new(exe).env("TGSI_BENCH_CHILD", size.to_string()).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut words = text.split_whitespace().map(|w| w.parse::<u64>().ok());
    Some((words.next()??, words.next()??))
}

/// The directory the sample measurements read: `TGSI_BENCH_DIR`, else `tgsi-samples/`.
fn samples_dir() -> PathBuf {
    std::env::var_os("TGSI_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tgsi-samples"))
}

fn emitted(c: &compile::Compiled) -> usize {
    c.listings().iter().map(|(_, l)| l.lines().count()).sum()
}

fn main() {
    if let Some(size) = std::env::var("TGSI_BENCH_CHILD").ok().and_then(|s| s.parse().ok()) {
        child(size);
        return;
    }
    let sizes: Vec<usize> = std::env::var("TGSI_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![250, 1000, 4000, 16000, 64000]);
    if let Some(dir) = std::env::var_os("TGSI_BENCH_DUMP") {
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap();
        for &n in &sizes {
            std::fs::write(dir.join(format!("synthetic-{n}.tgsi")), synthetic(n)).unwrap();
        }
        return;
    }
    let options = Options::default();
    if let Some(rounds) = std::env::var("TGSI_BENCH_PROFILE").ok().and_then(|s| s.parse::<usize>().ok()) {
        let texts: Vec<String> = if let Some(path) = std::env::var_os("TGSI_BENCH_FILE") {
            vec![std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("TGSI_BENCH_FILE {path:?}: {e}"))]
        } else if std::env::var_os("TGSI_BENCH_SIZES").is_some() {
            sizes.iter().map(|&n| synthetic(n)).collect()
        } else {
            let mut files = Vec::new();
            collect_tgsi(&samples_dir(), &mut files);
            let only = std::env::var("TGSI_BENCH_ONLY").unwrap_or_default();
            files.retain(|p| p.to_string_lossy().contains(&only));
            files.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect()
        };
        let repeat = std::env::var("TGSI_BENCH_REPEAT").ok().and_then(|s| s.parse::<usize>().ok()).unwrap_or(1);
        for _ in 0..rounds {
            for t in &texts {
                for _ in 0..repeat {
                    black_box(compile::compile(black_box(t), &options).ok());
                }
            }
        }
        return;
    }

    // Samples: every one that compiles.
    let mut files = Vec::new();
    collect_tgsi(&samples_dir(), &mut files);
    let all = files.len();
    let (files, texts): (Vec<PathBuf>, Vec<String>) = files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .filter(|(_, t)| compile::compile(t, &options).is_ok())
        .unzip();
    println!("(times are CPU time of the benchmark thread)");
    println!("samples: {} of {} compile", texts.len(), all);
    if texts.is_empty() {
        eprintln!("no shader under {} compiles: nothing to measure", samples_dir().display());
        std::process::exit(2);
    }

    // Single thread: rounds over all samples, each compile timed on its own. A shader's time is
    // the median of its runs (robust to the odd preemption); the mean comes from the CPU time
    // of the whole loop.
    let mut runs: Vec<Vec<f64>> = vec![Vec::new(); texts.len()];
    let (start, cpu) = (Instant::now(), thread_cpu());
    let mut rounds = 0;
    while rounds < 11 || start.elapsed() < budget(3.0) {
        for (k, t) in texts.iter().enumerate() {
            let s = Instant::now();
            black_box(compile::compile(black_box(t), &options).ok());
            runs[k].push(s.elapsed().as_secs_f64());
        }
        rounds += 1;
    }
    let total = match (cpu, thread_cpu()) {
        (Some(a), Some(b)) => b - a,
        _ => start.elapsed().as_secs_f64(),
    };
    let rotation: Vec<f64> = runs.iter_mut().map(|r| median(r)).collect();
    let mut each = rotation.clone();
    each.sort_by(f64::total_cmp);
    let mean = total / (rounds * texts.len()) as f64;
    println!(
        "samples, single thread: median {:.1} µs per shader (min {:.1}, max {:.1}), mean {:.1} µs; {:.0} shaders/s",
        each[each.len() / 2] * 1e6,
        each[0] * 1e6,
        each[each.len() - 1] * 1e6,
        mean * 1e6,
        1.0 / mean
    );

    // The same samples, each compiled many times in a row before the next: the branch predictor
    // and caches learn the one shader, which a rotation over different shaders (above, and any
    // real batch) does not allow. The gap between the two medians is stall time, not work
    // (docs/backend.md, "Instructions are not all of the wall time").
    let one_at_a_time: Vec<f64> = texts
        .iter()
        .map(|t| {
            per_run(budget(3.0 / texts.len() as f64), 20, || {
                black_box(compile::compile(black_box(t), &options).ok());
            })
        })
        .collect();
    println!(
        "samples, single thread, one shader at a time (each compiled repeatedly): median {:.1} µs per shader",
        median(&mut one_at_a_time.clone()) * 1e6
    );
    if let Some(path) = std::env::var_os("TGSI_BENCH_TSV") {
        write_per_file(&PathBuf::from(path), &files, &texts, &rotation, &one_at_a_time);
    }

    // Between the two: rounds over the samples, each compiled four times in a row, each of the
    // four timed. Caches are warm after one compile of a shader; a branch predictor learns its
    // branch sequence over several, so a time that keeps falling from the 2nd to the 4th compile
    // is the predictor's (docs/backend.md).
    let mut runs: Vec<[Vec<f64>; 4]> = vec![Default::default(); texts.len()];
    let start = Instant::now();
    let mut rounds = 0;
    while rounds < 5 || start.elapsed() < budget(3.0) {
        for (k, t) in texts.iter().enumerate() {
            for run in &mut runs[k] {
                let s = Instant::now();
                black_box(compile::compile(black_box(t), &options).ok());
                run.push(s.elapsed().as_secs_f64());
            }
        }
        rounds += 1;
    }
    // The k-th compile's time of the median sample (each sample's median over the rounds).
    let medians: Vec<f64> =
        (0..4).map(|n| median(&mut runs.iter_mut().map(|r| median(&mut r[n])).collect::<Vec<_>>()) * 1e6).collect();
    println!(
        "samples, single thread, each shader four times in a row: median of the 1st compile {:.1} µs, 2nd {:.1}, 3rd {:.1}, 4th {:.1}",
        medians[0], medians[1], medians[2], medians[3]
    );

    // Batch: all samples, many times over, on every core (wall time).
    let copies = if quick() { 20 } else { 100 };
    let jobs: Vec<&String> = (0..copies).flat_map(|_| texts.iter()).collect();
    let start = Instant::now();
    let ok = jobs.par_iter().filter(|t| compile::compile(t, &options).is_ok()).count();
    let wall = start.elapsed().as_secs_f64();
    println!(
        "samples, batch on {} threads: {:.0} shaders/s ({} compiles in {:.2} s wall)",
        rayon::current_num_threads(),
        ok as f64 / wall,
        ok,
        wall
    );

    // Stages, summed over the samples.
    let mut total = StageTimes::default();
    let rounds = if quick() { 20 } else { 100 };
    for _ in 0..rounds {
        for t in &texts {
            let (c, times) = compile::compile_timed(t, &options);
            black_box(c.ok());
            total.add(&times);
        }
    }
    print_stages("samples, per stage", &total, rounds * texts.len(), "shader");

    // The sweep: µs per TGSI statement and per emitted instruction, and peak memory.
    println!("generated fragment shaders (ALU, textures, if/else, loops, indirect constants):");
    println!("  {:>7} {:>9} {:>10} {:>13} {:>16} {:>10}", "TGSI", "emitted", "ms", "µs/TGSI", "µs/instr", "peak MiB");
    let mut split = Vec::new();
    for &n in &sizes {
        let text = synthetic(n);
        let stmts = statements(&text);
        let c = compile::compile(&text, &options).expect("the generated shader compiles");
        let out = emitted(&c);
        let s = per_run(budget(1.5), 2, || {
            black_box(compile::compile(black_box(&text), &options).ok());
        });
        let peak = child_peak(n).map_or("?".to_string(), |(_, after)| format!("{:.1}", after as f64 / 1024.0));
        println!(
            "  {stmts:>7} {out:>9} {:>10.2} {:>13.2} {:>16.2} {peak:>10}",
            s * 1e3,
            s * 1e6 / stmts as f64,
            s * 1e6 / out as f64
        );
        // Each stage's fastest of several runs: a lap is wall time, and on a shared machine
        // one run's lap of a few milliseconds often includes being descheduled.
        let mut fastest: Option<StageTimes> = None;
        for _ in 0..if quick() { 3 } else { 7 } {
            let (_, times) = compile::compile_timed(&text, &options);
            fastest = Some(match fastest {
                Some(f) => stagewise_min(&f, &times),
                None => times,
            });
        }
        split.push((stmts, fastest.unwrap_or_default()));
    }
    for (stmts, times) in split {
        print_stages(&format!("{stmts} statements, per stage (fastest run)"), &times, stmts, "TGSI statement");
    }
}

/// The middle value (the upper one of an even count); sorts `values`.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Writes one row per compiled file: its path, its size in bytes, and its median compile time in
/// rotation and one shader at a time (µs), for comparing shader by shader with another compiler.
fn write_per_file(path: &Path, files: &[PathBuf], texts: &[String], rotation: &[f64], one: &[f64]) {
    let mut out = String::from("file\tbytes\trotation_us\tone_at_a_time_us\n");
    for (((file, text), r), o) in files.iter().zip(texts).zip(rotation).zip(one) {
        out.push_str(&format!("{}\t{}\t{:.2}\t{:.2}\n", file.display(), text.len(), r * 1e6, o * 1e6));
    }
    std::fs::write(path, out).unwrap_or_else(|e| panic!("TGSI_BENCH_TSV {}: {e}", path.display()));
}

fn stagewise_min(a: &StageTimes, b: &StageTimes) -> StageTimes {
    StageTimes {
        parse_check: a.parse_check.min(b.parse_check),
        lower: a.lower.min(b.lower),
        optimize: a.optimize.min(b.optimize),
        legalize: a.legalize.min(b.legalize),
        regalloc: a.regalloc.min(b.regalloc),
        flow_emit: a.flow_emit.min(b.flow_emit),
    }
}

fn print_stages(title: &str, t: &StageTimes, per: usize, unit: &str) {
    let parts = [
        ("parse+check", t.parse_check),
        ("lower", t.lower),
        ("optimise", t.optimize),
        ("legalise", t.legalize),
        ("regalloc", t.regalloc),
        ("flow+emit", t.flow_emit),
    ];
    let sum: Duration = parts.iter().map(|p| p.1).sum();
    let line: Vec<String> = parts
        .iter()
        .map(|(name, d)| {
            format!(
                "{name} {:.2} µs ({:.0}%)",
                d.as_secs_f64() * 1e6 / per as f64,
                100.0 * d.as_secs_f64() / sum.as_secs_f64().max(1e-12)
            )
        })
        .collect();
    println!("{title} (wall time per {unit}): {}", line.join(", "));
}
