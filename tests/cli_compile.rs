//! The `compile` and `verify` commands, run as a user would: output formats and where they go,
//! exit codes (0 success, 1 a failing input, 2 usage), summaries, and that a failure never
//! leaves a partial output file behind.

use pretty_assertions::assert_eq;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use tgsi2va::emit::meta::Metadata;

const GOOD: &str = "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\n  0: MOV OUT[0], IN[0]\n  1: END\n";
/// Parses and checks, but the translator refuses it.
const REJECTED: &str = "FRAG\nDCL OUT[0], COLOR\nDCL TEMP[0]\n  0: DADD TEMP[0].xy, TEMP[0], TEMP[0]\n  1: MOV OUT[0], TEMP[0]\n  2: END\n";
const MALFORMED: &str = "FRAG\n  0: MOVE OUT[0], IN[0]\n";

fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tgsi2va")).args(args).current_dir(dir).output().expect("runs")
}

fn run_stdin(dir: &Path, args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tgsi2va"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tgsi2va-cli-compile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, contents: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
}

/// Every file under `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn one_input_prints_its_assembly_which_reassembles_to_the_blob() {
    let dir = scratch("asm");
    write(&dir, "good.tgsi", GOOD);
    let o = run_in(&dir, &["compile", "good.tgsi"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let listing = text(&o.stdout);
    assert!(listing.starts_with("# main: offset 0, "), "{listing}");
    assert!(listing.contains("BLEND."), "{listing}");
    // The listing is Mesa assembly: it assembles back to exactly the blob's code.
    let asm: String = listing.lines().filter(|l| !l.starts_with('#')).map(|l| format!("{l}\n")).collect();
    write(&dir, "good.asm", &asm);
    let o = run_in(&dir, &["compile", "good.tgsi", "-o", "good.bin"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = run_in(&dir, &["asm", "good.asm", "-o", "re.bin"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let blob = std::fs::read(dir.join("good.bin")).unwrap();
    let re = std::fs::read(dir.join("re.bin")).unwrap();
    let meta = Metadata::from_json(&std::fs::read_to_string(dir.join("good.json")).unwrap()).unwrap();
    let main = meta.variant("main").unwrap();
    assert_eq!(&blob[..main.size as usize], &re[..], "assembly and blob differ");
}

#[test]
fn output_format_follows_the_extension_or_emit() {
    let dir = scratch("formats");
    write(&dir, "good.tgsi", GOOD);
    for (out, marker) in [
        ("g.bin", None),
        ("g.json", Some("\"stage\": \"fragment\"")),
        ("g.c", Some("static const uint8_t shader[")),
        ("g.txt", Some("    LD_VAR_BUF_IMM")),
        ("g.s", Some("BLEND.")),
    ] {
        let o = run_in(&dir, &["compile", "good.tgsi", "-o", out]);
        assert_eq!(o.status.code(), Some(0), "{out}: {}", text(&o.stderr));
        let bytes = std::fs::read(dir.join(out)).unwrap();
        match marker {
            None => {
                assert_eq!(bytes.len() % 128, 0, "the blob is padded to 128 bytes");
                assert!(dir.join("g.json").exists(), "metadata beside the blob");
            }
            Some(m) => assert!(text(&bytes).contains(m), "{out}: {}", text(&bytes)),
        }
    }
    // --emit wins over the extension; --no-meta writes the blob alone.
    let o = run_in(&dir, &["compile", "good.tgsi", "-o", "forced.out", "--emit", "hex"]);
    assert_eq!(o.status.code(), Some(0));
    let hex = std::fs::read_to_string(dir.join("forced.out")).unwrap();
    assert!(hex.lines().nth(1).unwrap().split("    ").next().unwrap().split(' ').count() == 8, "{hex}");
    let o = run_in(&dir, &["compile", "good.tgsi", "-o", "alone.bin", "--no-meta"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(dir.join("alone.bin").exists() && !dir.join("alone.json").exists());
}

#[test]
fn standard_input_and_output() {
    let dir = scratch("stdio");
    let o = run_stdin(&dir, &["compile", "-", "--emit", "json"], GOOD);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let meta = Metadata::from_json(&text(&o.stdout)).unwrap();
    assert_eq!(meta.stage, "fragment");
    let o = run_stdin(&dir, &["compile", "-", "-o", "-", "--emit", "bin"], GOOD);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(o.stdout.len() % 128, 0);
    assert!(files(&dir).is_empty(), "nothing written: {:?}", files(&dir));
}

#[test]
fn a_rejected_shader_fails_with_its_reason_and_leaves_no_file() {
    let dir = scratch("rejected");
    write(&dir, "bad.tgsi", REJECTED);
    write(&dir, "broken.tgsi", MALFORMED);
    let o = run_in(&dir, &["compile", "bad.tgsi", "-o", "bad.bin"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("DADD cannot be compiled for Valhall") && err.contains("bad.tgsi:4:6"), "{err}");
    let o = run_in(&dir, &["compile", "broken.tgsi", "-o", "broken.bin"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("MOVE"), "{}", text(&o.stderr));
    assert_eq!(files(&dir), ["bad.tgsi", "broken.tgsi"]);
}

#[test]
fn out_dir_mirrors_directories_and_reports_each_input() {
    let dir = scratch("outdir");
    write(&dir, "src/fs/a.tgsi", GOOD);
    write(&dir, "src/vs/a.tgsi", GOOD.replace("FRAG", "VERT").replace("COLOR", "GENERIC[0]").as_str());
    write(&dir, "src/fs/bad.tgsi", REJECTED);
    let o = run_in(&dir, &["compile", "src", "--out-dir", "build/shaders"]);
    assert_eq!(o.status.code(), Some(1), "one input fails");
    assert!(text(&o.stdout).ends_with("2 passed, 1 failed\n"), "{}", text(&o.stdout));
    assert_eq!(
        files(&dir.join("build")),
        ["shaders/fs/a.bin", "shaders/fs/a.json", "shaders/vs/a.bin", "shaders/vs/a.json"],
        "no output for the failing input, and same-named inputs do not collide"
    );
    // Explicit files with the same name would collide: a usage error before anything is written.
    let o = run_in(&dir, &["compile", "src/fs/a.tgsi", "src/vs/a.tgsi", "--out-dir", "flat"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("would both be written to"), "{}", text(&o.stderr));
    assert!(!dir.join("flat").exists());
}

#[test]
fn usage_errors_exit_with_2() {
    let dir = scratch("usage");
    write(&dir, "a.tgsi", GOOD);
    write(&dir, "b.tgsi", GOOD);
    for args in [
        &["compile", "a.tgsi", "b.tgsi", "-o", "x.bin"][..],
        &["compile", "a.tgsi", "--gpu", "G99"],
        &["compile", "a.tgsi", "--emit", "elf"],
        &["compile", "a.tgsi", "--print-after", "nonsense"],
        &["verify", "a.tgsi", "--seeds", "many"],
    ] {
        let o = run_in(&dir, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
        assert!(!text(&o.stderr).is_empty(), "{args:?} explains itself");
    }
    assert_eq!(files(&dir), ["a.tgsi", "b.tgsi"]);
    // A missing input is a failing input, not a usage error.
    let o = run_in(&dir, &["compile", "missing.tgsi", "-o", "m.bin"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("cannot read missing.tgsi"), "{}", text(&o.stderr));
}

#[test]
fn stats_lines_and_targets() {
    let dir = scratch("stats");
    write(&dir, "good.tgsi", GOOD);
    let o = run_in(&dir, &["compile", "good.tgsi", "-o", "g.bin", "--stats"]);
    assert_eq!(o.status.code(), Some(0));
    let line = text(&o.stderr);
    let shape = regex_like_shader_db(&line);
    assert!(shape, "Mesa's shader-db line: {line}");
    let o = run_in(&dir, &["compile", "good.tgsi", "-o", "g.bin", "--stats=table"]);
    assert!(text(&o.stderr).contains("spills:fills"), "{}", text(&o.stderr));
    // v10 parts share the encoding; the metadata names the part.
    let o = run_in(&dir, &["compile", "good.tgsi", "--emit", "json", "--gpu", "Mali-G610"]);
    assert_eq!(o.status.code(), Some(0));
    let meta = Metadata::from_json(&text(&o.stdout)).unwrap();
    assert_eq!((meta.gpu.as_str(), meta.arch), ("Mali-G610", 10));
}

/// `NAME - STAGE VARIANT shader: N inst, F cycles, F fma, F cvt, F sfu, F v, F t, F ls,
/// N quadwords, N threads, N loops, N:N spills:fills`.
fn regex_like_shader_db(line: &str) -> bool {
    let Some((head, tail)) = line.trim_end().split_once(" shader: ") else { return false };
    if head != "good.tgsi - fragment main" {
        return false;
    }
    let fields: Vec<&str> = tail.split(", ").collect();
    let units =
        ["inst", "cycles", "fma", "cvt", "sfu", "v", "t", "ls", "quadwords", "threads", "loops", "spills:fills"];
    fields.len() == units.len()
        && fields.iter().zip(units).all(|(f, unit)| {
            let Some((value, name)) = f.split_once(' ') else { return false };
            name == unit
                && match unit {
                    "spills:fills" => value.split(':').all(|n| n.parse::<u32>().is_ok()),
                    "inst" | "quadwords" | "threads" | "loops" => value.parse::<u32>().is_ok(),
                    _ => value.parse::<f64>().is_ok() && value.split('.').nth(1).is_some_and(|d| d.len() == 6),
                }
        })
}

#[test]
fn print_after_dumps_the_ir_to_standard_error() {
    let dir = scratch("print-after");
    write(&dir, "good.tgsi", GOOD);
    let o = run_in(&dir, &["compile", "good.tgsi", "-o", "g.bin", "--print-after", "lower"]);
    assert_eq!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    assert!(err.starts_with("# good.tgsi: IR after lower\nfragment shader\n"), "{err}");
    assert!(err.contains("LD_VAR_BUF_IMM"), "{err}");
}

#[test]
fn verify_passes_agreeing_shaders_and_fails_the_rest() {
    let dir = scratch("verify");
    write(&dir, "good.tgsi", GOOD);
    write(&dir, "bad.tgsi", REJECTED);
    let o = run_in(&dir, &["verify", "good.tgsi", "--seeds", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    assert_eq!(text(&o.stdout), "1 passed, 0 failed\n");
    let o = run_in(&dir, &["verify", "."]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).ends_with("1 passed, 1 failed\n"), "{}", text(&o.stdout));
    assert!(text(&o.stderr).contains("bad.tgsi: cannot be verified: it does not compile"), "{}", text(&o.stderr));
}

/// Output into something that is not a regular file (here a FIFO, standing in for `/dev/null`
/// or a terminal) is written in place: renaming a temporary file over it would replace the
/// device with a plain file. Nothing is written beside it.
#[cfg(unix)]
#[test]
fn output_into_a_fifo_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("fifo");
    write(&dir, "good.tgsi", GOOD);
    let fifo = dir.join("out.bin");
    assert!(Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs").success());
    // Opened for reading and writing, a FIFO neither blocks here nor makes the writer wait; the
    // blob fits the pipe buffer.
    let mut pipe = std::fs::OpenOptions::new().read(true).write(true).open(&fifo).unwrap();
    let o = run_in(&dir, &["compile", "good.tgsi", "-o", "out.bin"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO is still a FIFO");
    let expected = run_in(&dir, &["compile", "good.tgsi", "-o", "-", "--emit", "bin"]).stdout;
    let mut received = vec![0; expected.len()];
    std::io::Read::read_exact(&mut pipe, &mut received).unwrap();
    assert_eq!(received, expected);
    assert_eq!(files(&dir), ["good.tgsi", "out.bin"], "no metadata beside a FIFO");
}

/// A symbolic link is followed: its target receives the output and the link stays a link.
#[cfg(unix)]
#[test]
fn output_through_a_symbolic_link_keeps_the_link() {
    let dir = scratch("symlink");
    write(&dir, "good.tgsi", GOOD);
    write(&dir, "real/out.s", "old\n");
    std::os::unix::fs::symlink("real/out.s", dir.join("out.s")).unwrap();
    let o = run_in(&dir, &["compile", "good.tgsi", "-o", "out.s"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(std::fs::symlink_metadata(dir.join("out.s")).unwrap().file_type().is_symlink());
    let expected = run_in(&dir, &["compile", "good.tgsi"]).stdout;
    assert_eq!(std::fs::read(dir.join("real/out.s")).unwrap(), expected);
}

/// Geometry and tessellation shaders are valid TGSI that Valhall cannot run: the error says why.
#[test]
fn stages_without_hardware_are_rejected_with_the_reason() {
    let dir = scratch("stages");
    let gs = "GEOM\nPROPERTY GS_INPUT_PRIMITIVE TRIANGLES\nPROPERTY GS_OUTPUT_PRIMITIVE TRIANGLE_STRIP\n\
              PROPERTY GS_MAX_OUTPUT_VERTICES 3\nDCL IN[][0], POSITION\nDCL OUT[0], POSITION\n\
              IMM[0] INT32 {0, 0, 0, 0}\n  0: MOV OUT[0], IN[0][0]\n  1: EMIT IMM[0].xxxx\n  2: END\n";
    write(&dir, "gs.tgsi", gs);
    let o = run_in(&dir, &["compile", "gs.tgsi", "-o", "gs.bin"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("error[E0300]") && err.contains("no geometry or tessellation stage"), "{err}");
    assert_eq!(files(&dir), ["gs.tgsi"]);
}
