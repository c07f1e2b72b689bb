//! Reconvergence after a divergent `CONT`, run in both executors (the TGSI interpreter, and the
//! compiler + Valhall emulator) on inputs chosen so that every lane continues in some
//! iterations and not in others: lane l skips the rest of iteration i (counted from 1) when
//! `(i ^ l) & 1` is set. TGSI parks continued lanes until the loop end, so in iteration i only
//! the lanes with i ≡ l (mod 2) run the rest of the body. The compiled code must keep the
//! continued lanes waiting at the loop's latch and the lanes that left at the loop exit:
//! cross-lane operations (BALLOT in a vertex shader, DDX in a fragment shader), atomics and a
//! BARRIER after the loop observe any lane that runs ahead. Each program is also checked by
//! `verify` over generated inputs.

use tgsi2va::exec::io::{Inputs, Outputs, RegKey};
use tgsi2va::verify::{Options, verify};

struct Both {
    interp: Outputs,
    emu: Outputs,
}

fn run(text: &str, inputs: &str) -> Both {
    let inputs = Inputs::from_json(inputs).unwrap();
    let program = tgsi2va::tgsi::parse(text).unwrap_or_else(|d| panic!("parse: {:?}", d.0));
    let interp = tgsi2va::interp::run(&program, &inputs).unwrap_or_else(|e| panic!("interp: {e}")).outputs;
    let compiled =
        tgsi2va::compile::compile(text, &Default::default()).unwrap_or_else(|d| panic!("compile: {:?}", d.0));
    let emu = tgsi2va::emu::run(&compiled.blob, &compiled.meta, &inputs).unwrap_or_else(|e| panic!("emu: {e}"));
    let report = verify(text, &Options { seeds: 8, ..Options::default() }).unwrap_or_else(|e| panic!("verify: {e}"));
    assert!(report.passed(), "verify over generated inputs:\n{report:?}");
    Both { interp, emu }
}

impl Both {
    /// `register` in every lane, on both sides.
    fn expect(&self, register: &str, expected: [[u32; 4]; 4]) {
        let key = RegKey::parse(register).unwrap();
        for (who, out) in [("interpreter", &self.interp), ("emulator", &self.emu)] {
            assert_eq!(out.outputs[&key], expected, "{who}: {register}");
        }
    }

    fn buffer(&self, index: u32) -> Vec<u32> {
        assert_eq!(self.interp.buffers[&index], self.emu.buffers[&index], "BUFFER[{index}]");
        self.emu.buffers[&index].clone()
    }
}

/// The loop shared by the programs: `TEMP[0].x` = i, `TEMP[1].x` = lane (set by `setup`), four
/// iterations; `body` follows the CONT, `tail` the loop.
fn with_loop(head: &str, setup: &str, body: &str, tail: &str) -> String {
    // `IMM[1]` (if any) ends the head: declarations come before instructions.
    let (decls, imm1) = head.split_at(head.find("IMM[1]").unwrap_or(head.len()));
    format!(
        "{decls}IMM[0] UINT32 {{0, 1, 4, 16}}
{imm1}  MOV TEMP[0], IMM[0].xxxx
{setup}BGNLOOP
  USGE TEMP[1].y, TEMP[0].xxxx, IMM[0].zzzz
  UIF TEMP[1].yyyy
    BRK
  ENDIF
  UADD TEMP[0].x, TEMP[0].xxxx, IMM[0].yyyy
  XOR TEMP[1].z, TEMP[0].xxxx, TEMP[1].xxxx
  AND TEMP[1].z, TEMP[1].zzzz, IMM[0].yyyy
  UIF TEMP[1].zzzz
    CONT
  ENDIF
{body}ENDLOOP
{tail}END
"
    )
}

const LANE_IDS: &str = r#"[["0x0",0,0,0],["0x1",0,0,0],["0x2",0,0,0],["0x3",0,0,0]]"#;

/// Vertex shader: the ballot of each iteration sees exactly the lanes running it (0b1010 in odd
/// iterations, 0b0101 in even ones); lane l accumulates `acc·16 + ballot` over its iterations.
#[test]
fn vertex_ballot_after_continue_sees_one_iteration() {
    let text = with_loop(
        "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\nDCL OUT[1], GENERIC[0]\nDCL TEMP[0..2]\n",
        "  MOV TEMP[1].x, IN[0].xxxx\n",
        "  BALLOT TEMP[2].xy, IMM[0].yyyy\n  UMAD TEMP[0].y, TEMP[0].yyyy, IMM[0].wwww, TEMP[2].xxxx\n",
        "  MOV OUT[0], IMM[0].xxxx\n  MOV OUT[1], TEMP[0]\n",
    );
    let both = run(&text, &format!(r#"{{"IN[0]": {LANE_IDS}}}"#));
    let (even, odd) = ([4, 0x55, 0, 0], [4, 0xAA, 0, 0]);
    both.expect("OUT[1]", [even, odd, even, odd]);
}

/// Fragment shader: DDX of `lane + 10·i` after the CONT reads the neighbour in the same
/// iteration (an inactive neighbour contributes 0): odd iterations give v1 − 0 = 1 + 10i, even
/// ones 0 − v0 = −10i, summed over each lane's iterations: −(20 + 40) and 11 + 31.
#[test]
fn fragment_derivative_after_continue_reads_the_same_iteration() {
    let text = with_loop(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL TEMP[0..2]\nIMM[1] FLT32 {10.0, 0.0, 0.0, 0.0}\n",
        "  F2U TEMP[1].x, IN[0].xxxx\n  MOV TEMP[2].y, IMM[1].yyyy\n",
        "  U2F TEMP[2].x, TEMP[0].xxxx\n  MAD TEMP[2].x, TEMP[2].xxxx, IMM[1].xxxx, IN[0].xxxx\n  DDX TEMP[2].x, TEMP[2].xxxx\n  ADD TEMP[2].y, TEMP[2].yyyy, TEMP[2].xxxx\n",
        "  MOV OUT[0], TEMP[2].yyyy\n",
    );
    // IN[0].x = lane (affine over the quad: x + 2y).
    let both = run(&text, r#"{"IN[0]": [[0,0,0,0],[1,0,0,0],[2,0,0,0],[3,0,0,0]]}"#);
    let even = [(-60.0f32).to_bits(); 4];
    let odd = [42.0f32.to_bits(); 4];
    both.expect("OUT[0]", [even, odd, even, odd]);
}

/// Compute shader: atomics after the CONT run one iteration at a time in ascending lane order
/// (iteration 1: lanes 1, 3 get 0, 1; 2: lanes 0, 2 get 2, 3; …), the BARRIER after the loop is
/// reached by all lanes together, and an atomic after it sees the lanes in order.
#[test]
fn compute_atomics_and_barrier_after_continue() {
    let text = with_loop(
        "COMP\nDCL SV[0], THREAD_ID\nDCL BUFFER[0]\nDCL TEMP[0..3]\n",
        "  MOV TEMP[1].x, SV[0].xxxx\n",
        "  ATOMUADD TEMP[2].x, BUFFER[0], IMM[0].xxxx, IMM[0].yyyy\n  UADD TEMP[0].y, TEMP[0].yyyy, TEMP[2].xxxx\n",
        "  BARRIER\n  ATOMUADD TEMP[2].y, BUFFER[0], IMM[0].zzzz, IMM[0].yyyy\n  UMAD TEMP[3].x, SV[0].xxxx, IMM[0].wwww, IMM[0].wwww\n  MOV TEMP[0].z, TEMP[2].yyyy\n  STORE BUFFER[0].xyz, TEMP[3].xxxx, TEMP[0]\n",
    );
    let both = run(&text, &format!(r#"{{"SV[0]": {LANE_IDS}, "buffers": {{"0": [{}]}}}}"#, ["0"; 20].join(",")));
    let b = both.buffer(0);
    assert_eq!(&b[..2], &[8, 4], "counters");
    // Per lane (16 bytes from offset 16): i, sum of returned values, the post-barrier atomic.
    let records: Vec<&[u32]> = b[4..].chunks(4).map(|r| &r[..3]).collect();
    // Returned values: lane 0 got 2 and 6, lane 1 got 0 and 4, lane 2 got 3 and 7, lane 3 got 1 and 5.
    assert_eq!(records, [&[4, 8, 0][..], &[4, 4, 1], &[4, 10, 2], &[4, 6, 3]]);
}
