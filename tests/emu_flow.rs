//! The flow rules the emulator enforces while running (docs/emulator.md §4): scoreboard waits,
//! `.end`, branch targets, divergence and `.reconverge`, the fragment output order, memory
//! ordering, the varying hidden state, barriers, undefined registers and the step limit.

use tgsi2va::emu::memory::{RegionKind, SSBO_BASE};
use tgsi2va::emu::{EmuError, ErrorKind, Machine, Program, Stage, Status};

/// A compute machine with SSBO 0 (64 bytes) mapped and r13 = its handle, r0–r12 defined.
fn compute() -> Machine {
    let mut m = Machine::new(Stage::Compute);
    m.memory.map(SSBO_BASE, vec![0; 64], RegionKind::Ssbo(0), true).unwrap();
    for r in 0..13 {
        m.set_reg_all(r, 0);
    }
    m.set_reg_all(13, 0x0600_0000);
    m
}

fn run(m: &mut Machine, text: &str) -> Result<(), EmuError> {
    let p = Program::assemble(text).unwrap_or_else(|e| panic!("{e}"));
    m.run(&p)
}

fn fails(m: &mut Machine, text: &str, kind: ErrorKind, index: usize, words: &str) -> EmuError {
    let e = run(m, text).expect_err(text);
    assert_eq!(e.kind, kind, "{e}");
    assert_eq!(e.index, Some(index), "{e}");
    assert!(e.to_string().contains(words), "`{e}` should mention `{words}`");
    e
}

#[test]
fn reading_before_the_wait_is_reported() {
    let text = "LEA_BUFFER.slot1 @r16:r17, 0x0, r13\nIADD.u32 r0, r16, 0x0\nNOP.end";
    let e = fails(&mut compute(), text, ErrorKind::Flow, 1, "missing wait on slot 1");
    assert!(e.to_string().contains("instruction 0 `LEA_BUFFER.slot1 @r16:r17, 0x0, r13`"), "{e}");
    assert!(e.to_string().contains("`IADD.u32 r0, r16, 0x0`"), "{e}");
    // A wait on another slot does not help.
    fails(
        &mut compute(),
        "LEA_BUFFER.slot1 @r16:r17, 0x0, r13\nNOP.wait02\nIADD.u32 r0, r16, 0x0\nNOP.end",
        ErrorKind::Flow,
        2,
        "slot 1",
    );
}

#[test]
fn correct_waits_pass() {
    for text in [
        "LEA_BUFFER.slot1.wait1 @r16:r17, 0x0, r13\nIADD.u32 r0, r16, 0x0\nNOP.end",
        "LEA_BUFFER.slot1 @r16:r17, 0x0, r13\nNOP.wait1\nIADD.u32 r0, r17, 0x0\nNOP.end",
        "LEA_BUFFER.slot2 @r16:r17, 0x0, r13\nIADD.u32.wait012 r1, r2, 0x0\nIADD.u32 r0, r16, 0x0\nNOP.end",
        "LEA_BUFFER.slot0 @r16:r17, 0x0, r13\nNOP.wait0126\nIADD.u32 r0, r16, 0x0\nNOP.end",
        "LEA_BUFFER.slot1 @r16:r17, 0x0, r13\nNOP.wait\nIADD.u32 r0, r16, 0x0\nNOP.end",
        "LEA_BUFFER.slot1 @r16:r17, 0x0, r13\nIADD.u32 r0, r1, 0x0\nNOP.end",
        "LEA_BUFFER.slot1.end @r16:r17, 0x0, r13",
    ] {
        let mut m = compute();
        run(&mut m, text).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
    let mut m = compute();
    run(&mut m, "LEA_BUFFER.slot1.wait1 @r16:r17, 0x0, r13\nIADD.u32 r0, r16, 0x0\nNOP.end").unwrap();
    assert_eq!(m.reg(0), [SSBO_BASE as u32; 4]);
}

#[test]
fn overwriting_before_the_wait_is_reported() {
    fails(
        &mut compute(),
        "LEA_BUFFER.slot1 @r16:r17, 0x0, r13\nIADD_IMM.i32 r17, 0x0, #0x1\nNOP.end",
        ErrorKind::Flow,
        1,
        "overwrites r17",
    );
    // Staging reads count as reads.
    fails(
        &mut compute(),
        "LEA_BUFFER.slot0 @r16:r17, 0x0, r13\nSTORE.i32.slot1 @r0, r16, offset:0\nNOP.end",
        ErrorKind::Flow,
        1,
        "reads r16",
    );
}

#[test]
fn missing_end_and_bad_branches() {
    fails(&mut compute(), "IADD_IMM.i32 r0, 0x0, #0x1", ErrorKind::Flow, 0, "missing .end");
    fails(&mut compute(), "BRANCHZ.eq 0x0, offset:5\nNOP.end", ErrorKind::Flow, 0, "outside the program");
    fails(&mut compute(), "BRANCHZ.eq 0x0, offset:-2\nNOP.end", ErrorKind::Flow, 0, "outside the program");
    fails(&mut compute(), "BRANCHZ.eq 0x0, offset:0\nIADD_IMM.i32 r0, 0x0, #0x1", ErrorKind::Flow, 1, "missing .end");
    // Branching to one past the end is out of range too (a jump to the exit needs NOP.end).
    fails(&mut compute(), "BRANCHZ.eq 0x0, offset:1\nNOP.end", ErrorKind::Flow, 0, "outside the program");
    fails(&mut compute(), "BRANCHZI.eq.absolute 0x0, 0x0\nNOP.end", ErrorKind::Flow, 0, "BRANCHZI to address");
    let mut m = compute();
    m.options.max_steps = 1000;
    fails(&mut m, "BRANCHZ.eq 0x0, offset:-1\nNOP.end", ErrorKind::Limit, 0, "infinite loop");
    // Running an empty program is fine.
    compute().run(&Program::default()).unwrap();
}

#[test]
fn divergent_if_else_reconverges() {
    // if (a < b) x = a + b; else x = a - b;  (§B.6), then a cross-lane read after the join.
    let text = "FCMP_OR.f32.lt.m1 r2, r0, r1, 0x0
BRANCHZ.eq.reconverge r2.h0, offset:2
FADD.f32 r3, r0, r1
BRANCHZ.eq.reconverge 0x0, offset:1
FADD.f32.reconverge r3, r0, r1.neg
CLPER.i32.subgroup4.xor r4, r3, 0x03020100.b11
NOP.end";
    let mut m = Machine::new(Stage::Compute);
    m.set_reg_lanes(0, [1.0f32, 5.0, 2.0, 9.0].map(f32::to_bits));
    m.set_reg_lanes(1, [2.0f32, 3.0, 4.0, 1.0].map(f32::to_bits));
    run(&mut m, text).unwrap();
    let x = [3.0f32, 2.0, 6.0, 8.0];
    assert_eq!(m.reg(3), x.map(f32::to_bits));
    assert_eq!(m.reg(4), [x[1], x[0], x[3], x[2]].map(f32::to_bits), "all lanes active again after the join");
    // Without .reconverge on the divergent branch.
    let bad = text.replacen("BRANCHZ.eq.reconverge r2.h0", "BRANCHZ.eq r2.h0", 1);
    let mut m2 = m.clone();
    fails(&mut m2, &bad, ErrorKind::Flow, 1, "divergent branch without .reconverge");
    // Without .reconverge where the else block falls into the join.
    let bad = text.replace("FADD.f32.reconverge r3, r0, r1.neg", "FADD.f32 r3, r0, r1.neg");
    fails(&mut m, &bad, ErrorKind::Flow, 4, "needs .reconverge");
}

#[test]
fn divergent_loop_and_inactive_lanes() {
    // for (i = 0; i < n; i++) sum += i;  with a per-lane n (§B.6 loop layout).
    let text = "IADD_IMM.i32.reconverge r1, 0x0, #0x0
ICMP_OR.s32.ge.m1 r2, r1, r3, 0x0
BRANCHZ.eq.reconverge r2.h0, offset:1
BRANCHZ.eq 0x0, offset:4
IADD.s32 r4, r4, r1
CLPER.i32.subgroup4.umax r5, r1, 0x03020100.b11
IADD_IMM.i32 r1, r1, #0x1
BRANCHZ.eq.reconverge 0x0, offset:-7
NOP.end";
    let mut m = Machine::new(Stage::Compute);
    m.set_reg_lanes(3, [0, 1, 2, 3]);
    m.set_reg_all(4, 0);
    m.set_reg_all(5, 0x1234);
    run(&mut m, text).unwrap();
    assert_eq!(m.reg(4), [0, 0, 1, 3]);
    // Lane 1 leaves after one iteration: later reads of lane 1 give the inactive value.
    assert_eq!(m.reg(5), [0x1234, 0, 0xFFFF_FFFF, 0xFFFF_FFFF]);
}

/// DISCARD makes a lane a helper (ABI §B.7): `CLPER` still reads its value until an instruction
/// with `.discard` terminates it; afterwards it is inactive.
#[test]
fn discarded_lane_feeds_clper_until_the_discard_flow() {
    let text = "DISCARD.f32.lt r0, 0x0
CLPER.i32.subgroup4.xor.inf r1, r0, 0x03020100.b11
WMASK.subgroup4 r4, r60
FADD.f32.discard r3, r0, 0x0
CLPER.i32.subgroup4.xor.inf r2, r0, 0x03020100.b11
WMASK.subgroup4 r5, r60
NOP.wait0126
ATEST.wait0 @r60, r60, 0x3F800000, atest_datum.w0
NOP.end";
    let mut m = Machine::new(Stage::Fragment);
    m.set_reg_lanes(0, [1.0f32, -1.0, 2.0, 3.0].map(f32::to_bits));
    m.set_reg_all(60, 1);
    run(&mut m, text).unwrap();
    assert_eq!(m.killed(), vec![1]);
    // Before `.discard`: lane 0 reads lane 1's -1.0, and lane 1 still computes its own result.
    assert_eq!(m.reg(1), [-1.0f32, 1.0, 3.0, 2.0].map(f32::to_bits));
    // After it: lane 1 is gone, lane 0 reads the inactive result +inf.
    assert_eq!(m.reg(2)[0], f32::INFINITY.to_bits());
    assert_eq!(m.reg(2)[2..], [3.0f32, 2.0].map(f32::to_bits));
    // WMASK counts the helper while it runs.
    assert_eq!(m.reg(4)[0], 0b1111);
    assert_eq!(m.reg(5)[0], 0b1101);
    assert_eq!(m.status[1], Status::Killed);
    assert_eq!(m.status[0], Status::Ended);
}

/// Without a `.discard`, a discarded lane runs to the end (here: without ATEST, which it may
/// skip), reading and writing registers like the others.
#[test]
fn discarded_lane_runs_to_the_end_without_discard_flow() {
    let text = "DISCARD.f32.lt r0, 0x0
FADD.f32 r1, r0, r0
BRANCHZ.eq.reconverge r2.h0, offset:3
NOP.wait0126
ATEST.wait0 @r60, r60, 0x3F800000, atest_datum.w0
NOP.reconverge
NOP.end";
    let mut m = Machine::new(Stage::Fragment);
    m.set_reg_lanes(0, [1.0f32, -1.0, 2.0, 3.0].map(f32::to_bits));
    // Lane 1 (the discarded one) jumps over ATEST.
    m.set_reg_lanes(2, [1, 0, 1, 1]);
    m.set_reg_all(60, 1);
    run(&mut m, text).unwrap();
    assert_eq!(m.killed(), vec![1]);
    assert_eq!(m.status, [Status::Ended; 4]);
    assert_eq!(m.reg(1)[1], (-2.0f32).to_bits());
    // A lane that was not discarded must still run ATEST.
    let mut m = Machine::new(Stage::Fragment);
    m.set_reg_lanes(0, [1.0f32, 1.0, 2.0, 3.0].map(f32::to_bits));
    m.set_reg_lanes(2, [1, 0, 1, 1]);
    m.set_reg_all(60, 1);
    let e = fails(&mut m, text, ErrorKind::Flow, 6, "without ATEST");
    assert_eq!(e.lane, Some(1), "{e}");
}

/// Once every running lane of the quad is discarded, they are all terminated: nothing after
/// that runs (the undefined r40 is never read).
#[test]
fn a_fully_discarded_quad_terminates() {
    let text = "DISCARD.f32.lt r0, 0x0\nIADD.u32 r1, r40, 0x0\nNOP.end";
    let mut m = Machine::new(Stage::Fragment);
    m.set_reg_lanes(0, [-1.0f32, -1.0, -2.0, -3.0].map(f32::to_bits));
    run(&mut m, text).unwrap();
    assert_eq!(m.killed(), vec![0, 1, 2, 3]);
    assert_eq!(m.status, [Status::Killed; 4]);
    // With one lane left, the discarded ones keep running and read r40 too.
    let mut m = Machine::new(Stage::Fragment);
    m.set_reg_lanes(0, [-1.0f32, -1.0, -2.0, 3.0].map(f32::to_bits));
    let e = fails(&mut m, text, ErrorKind::Undefined, 1, "r40");
    assert_eq!(e.lane, Some(0), "{e}");
}

/// A discarded lane's stores and atomics do not happen, except `.force` accesses (thread-local
/// spills, ABI §C.14); its atomics return the memory's current value.
#[test]
fn discarded_lane_stores_and_atomics_do_not_happen() {
    let text = "DISCARD.f32.lt r0, 0x0
STORE.i32.slot0.wait0 @r2, r10, offset:0x0
STORE.i32.force.slot0.wait0 @r2, r10, offset:0x10
ATOM_RETURN.i32.slot0.aadd.wait0 @r3, @r2, r12, offset:0x0
NOP.wait0126
ATEST.wait0 @r60, r60, 0x3F800000, atest_datum.w0
NOP.end";
    let mut m = Machine::new(Stage::Fragment);
    m.memory.map(SSBO_BASE, vec![0; 64], RegionKind::Ssbo(0), true).unwrap();
    m.set_reg_lanes(0, [1.0f32, -1.0, 2.0, -3.0].map(f32::to_bits));
    m.set_reg_lanes(2, [10, 11, 12, 13]);
    // r10:r11 = word `lane` of the SSBO, r12:r13 = its word 8 (the atomic counter).
    m.set_reg_lanes(10, std::array::from_fn(|l| SSBO_BASE as u32 + 4 * l as u32));
    m.set_reg_all(11, (SSBO_BASE >> 32) as u32);
    m.set_reg_all(12, SSBO_BASE as u32 + 32);
    m.set_reg_all(13, (SSBO_BASE >> 32) as u32);
    m.set_reg_all(60, 1);
    run(&mut m, text).unwrap();
    assert_eq!(m.killed(), vec![1, 3]);
    let r = m.memory.region(RegionKind::Ssbo(0)).unwrap();
    let words: Vec<u32> = r.data.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    assert_eq!(words[..4], [10, 0, 12, 0], "plain stores of lanes 1 and 3 are dropped");
    assert_eq!(words[4..8], [10, 11, 12, 13], ".force stores happen in every lane");
    assert_eq!(words[8], 10 + 12, "only lanes 0 and 2 add");
    // Lanes run in order: lane 1 sees lane 0's addition, lane 3 the final value.
    assert_eq!(m.reg(3), [0, 10, 10, 22]);
}

fn fragment() -> Machine {
    let mut m = Machine::new(Stage::Fragment);
    m.set_reg_all(60, 1);
    for r in 0..4 {
        m.set_reg_all(r, 0);
    }
    m
}

const ATEST: &str = "NOP.wait0126\nATEST.wait0 @r60, r60, r3, atest_datum.w0";
const BLEND_END: &str = "NOP.wait\nBLEND.slot0.v4.auto.end @r0:r1:r2:r3, blend_descriptor_0.w0, r60, target:0x0";

#[test]
fn fragment_output_order() {
    run(&mut fragment(), &format!("{ATEST}\n{BLEND_END}")).unwrap();
    fails(&mut fragment(), "NOP.end", ErrorKind::Flow, 0, "without ATEST");
    fails(&mut fragment(), BLEND_END, ErrorKind::Flow, 1, "BLEND before ATEST");
    fails(&mut fragment(), &format!("{ATEST}\n{ATEST}\n{BLEND_END}"), ErrorKind::Flow, 3, "second ATEST");
    fails(
        &mut fragment(),
        "NOP.wait0126\nZS_EMIT.z.slot0 @r60, r0, 0x0, r60\nNOP.end",
        ErrorKind::Flow,
        1,
        "ZS_EMIT before ATEST",
    );
    fails(
        &mut fragment(),
        &format!("ATEST.wait0 @r60, r60, r3, atest_datum.w0\n{BLEND_END}"),
        ErrorKind::Flow,
        0,
        ".wait0126",
    );
    fails(
        &mut fragment(),
        &format!("{ATEST}\nNOP.wait0126\nBLEND.slot0.v4.auto.end @r0:r1:r2:r3, blend_descriptor_0.w0, r60, target:0x0"),
        ErrorKind::Flow,
        3,
        "with .wait",
    );
    fails(
        &mut fragment(),
        &format!(
            "{ATEST}\nNOP.wait0126\nZS_EMIT.z.slot0.wait0 @r60, r0, 0x0, r60\nNOP.wait\nBLEND.slot0.v4.auto @r0:r1:r2:r3, blend_descriptor_0.w0, r60, target:0x0\n{ATEST}\nNOP.end"
        ),
        ErrorKind::Flow,
        7,
        "second ATEST",
    );
    // The coverage ATEST writes is pending on slot 0.
    fails(
        &mut fragment(),
        "NOP.wait0126\nATEST @r60, r60, r3, atest_datum.w0\nIADD.u32 r4, r60, 0x0\nNOP.end",
        ErrorKind::Flow,
        2,
        "slot 0",
    );
    // A BLEND skipping past the end of the program.
    fails(
        &mut fragment(),
        &format!(
            "{ATEST}\nNOP.wait\nBLEND.slot0.v4.auto @r0:r1:r2:r3, blend_descriptor_0.w0, r60, target:0x5\nNOP.end"
        ),
        ErrorKind::Flow,
        3,
        "outside the program",
    );
    // The third ATEST source must be atest_datum.
    fails(&mut fragment(), "NOP.wait0126\nATEST.wait0 @r60, r60, r3, r3\nNOP.end", ErrorKind::Fault, 1, "atest_datum");
}

#[test]
fn memory_ordering() {
    let store_load = "LEA_BUFFER.slot0.wait0 @r16:r17, 0x0, r13
STORE.i32.slot1 @r1, r16, offset:0
LOAD.i32.unsigned.slot2.wait2 @r2, r16, offset:0
NOP.end";
    fails(&mut compute(), store_load, ErrorKind::Flow, 2, "missing wait");
    run(&mut compute(), &store_load.replace("STORE.i32.slot1", "STORE.i32.slot1.wait1")).unwrap();
    run(&mut compute(), &store_load.replace("offset:0\nLOAD", "offset:4\nLOAD")).unwrap();
    // Loads may overlap loads.
    run(&mut compute(), &store_load.replace("STORE.i32.slot1 @r1", "LOAD.i32.unsigned.slot1 @r3")).unwrap();
}

#[test]
fn varying_hidden_state() {
    let mut m = fragment();
    m.set_reg_all(61, 1);
    m.env.varyings.push(tgsi2va::emu::VaryingData { offset: 0, flat: false, location: 0, values: [[1, 2, 3, 4]; 4] });
    let two_stores = "LD_VAR_BUF_IMM.f32.slot0.src_f32.center.store @r4, r61, index:0x0
LD_VAR_BUF_IMM.f32.slot1.src_f32.center.store.wait01 @r5, r61, index:0x4
NOP.end";
    fails(&mut m.clone(), two_stores, ErrorKind::Flow, 1, "outstanding");
    let retrieve = "LD_VAR_BUF_IMM.f32.slot0.src_f32.center.store @r4, r61, index:0x0
LD_VAR_BUF_IMM.f32.slot1.src_f32.center.retrieve.wait01 @r5, r61, index:0x4
NOP.wait0126
ATEST.wait0 @r60, r60, r5, atest_datum.w0
NOP.end";
    let mut ok = m.clone();
    run(&mut ok, retrieve).unwrap();
    assert_eq!(ok.reg(5), [2; 4]);
    fails(
        &mut m.clone(),
        "LD_VAR_BUF_IMM.f32.slot1.src_f32.center.retrieve.wait1 @r5, r61, index:0x4\nNOP.end",
        ErrorKind::Flow,
        0,
        ".retrieve",
    );
    fails(
        &mut m.clone(),
        "LD_VAR_BUF_IMM.f32.slot0.v2.src_flat32.center.store.wait0 @r4:r5, r61, index:0x0\nNOP.end",
        ErrorKind::Fault,
        0,
        "flat",
    );
    fails(
        &mut m,
        "LD_VAR_BUF_IMM.f32.slot0.v2.src_f32.center.store.wait0 @r4:r5, r61, index:0x10\nNOP.end",
        ErrorKind::Fault,
        0,
        "no varying",
    );
}

#[test]
fn barrier_rules() {
    let mut m = compute();
    run(&mut m, "NOP.wait012\nBARRIER.slot7.wait\nNOP.end").unwrap();
    fails(&mut compute(), "BARRIER.slot7\nNOP.end", ErrorKind::Flow, 0, ".wait");
    fails(&mut compute(), "BARRIER.slot0.wait\nNOP.end", ErrorKind::Flow, 0, "slot 7");
    fails(
        &mut compute(),
        "LEA_BUFFER.slot0.wait0 @r16:r17, 0x0, r13\nSTORE.i32.slot1 @r1, r16, offset:0\nBARRIER.slot7.wait\nNOP.end",
        ErrorKind::Flow,
        2,
        "outstanding",
    );
    let mut d = compute();
    d.set_reg_lanes(1, [0, 1, 0, 1]);
    fails(
        &mut d,
        "BRANCHZ.reconverge r1, offset:1\nBARRIER.slot7.wait\nNOP.end",
        ErrorKind::Flow,
        1,
        "divergent barrier",
    );
    fails(&mut compute(), "LEA_BUFFER.slot7 @r16:r17, 0x0, r13\nNOP.end", ErrorKind::Flow, 0, "slot 7 is reserved");
}

#[test]
fn undefined_registers_and_register_modes() {
    let mut m = Machine::new(Stage::Compute);
    let e = run(&mut m, "IADD.u32 r0, r5, 0x0\nNOP.end").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Undefined, "{e}");
    assert!(e.message.contains("r5"));
    m.options.allow_undefined = true;
    run(&mut m, "IADD.u32 r0, r5, 0x0\nNOP.end").unwrap();
    // Half-written registers: only the written half is defined.
    let mut m = Machine::new(Stage::Compute);
    run(&mut m, "IADD_IMM.i32 r1.h0, 0x0, #0x5\nU16_TO_U32 r2, r1.h00\nNOP.end").unwrap();
    assert_eq!(
        run(&mut m.clone(), "IADD_IMM.i32 r1.h0, 0x0, #0x5\nU16_TO_U32 r2, r1.h10\nNOP.end").unwrap_err().kind,
        ErrorKind::Undefined
    );
    let mut m = Machine::new(Stage::Compute);
    m.options.work_registers = 32;
    fails(&mut m, "IADD_IMM.i32 r20, 0x0, #0x5\nNOP.end", ErrorKind::Fault, 0, "32 work registers");
    run(&mut m, "IADD_IMM.i32 r50, 0x0, #0x5\nNOP.end").unwrap();
}

#[test]
fn decode_errors_name_the_word() {
    let e = Program::from_words(&[0x0091_C000_0000_0001, 0x01FF_0000_0000_0000]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Decode);
    assert_eq!(e.index, Some(1));
    let e = Program::from_bytes(&[0; 12]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Blob);
    // The hardware operand rules (encoding spec §2.7 H2–H7) are checked at decode.
    for text in
        ["LOAD.i32.unsigned.slot0.end @r0, r3, offset:0", "LD_BUFFER.i32.unsigned.slot0.end @r0, lane_id.w0, r1"]
    {
        let e = Program::assemble(text).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Decode, "{text}");
        assert!(e.message.contains("hardware"), "{e}");
    }
    // Reserved flow values do not decode.
    let nop_end = tgsi2va::valhall::assemble_line("NOP.end").unwrap();
    let reserved = (nop_end & !(0xF << 59)) | (11 << 59);
    assert_eq!(Program::from_words(&[reserved]).unwrap_err().kind, ErrorKind::Decode);
}

/// The dependency slots belong to the warp: a wait in a branch that some lanes skip completes
/// the messages of the skipping lanes too, so they may read the results after the join.
#[test]
fn a_wait_in_one_branch_completes_every_lanes_messages() {
    // Lane 0 skips the block with the wait; after the join every lane reads r16.
    let text = "LEA_BUFFER.slot1 @r16:r17, 0x0, r13
BRANCHZ.eq.reconverge r20, offset:2
NOP.wait1
NOP.reconverge
IADD.u32 r0, r16, 0x0
NOP.end";
    let mut m = compute();
    m.set_reg_lanes(20, [0, 1, 1, 1]);
    run(&mut m, text).unwrap();
    assert_eq!(m.reg(0), [SSBO_BASE as u32; 4]);
    // Without any wait on either path the read is still caught.
    let mut m = compute();
    m.set_reg_lanes(20, [0, 1, 1, 1]);
    fails(&mut m, &text.replace("NOP.wait1", "NOP"), ErrorKind::Flow, 4, "missing wait on slot 1");
}
