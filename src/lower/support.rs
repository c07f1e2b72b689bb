//! Which TGSI opcodes compile: every opcode of the table is tried in a small probe shader and
//! the outcome is recorded. `docs/tgsi-support.md` is [`report`]'s output; a test keeps it
//! true (`BLESS=1 cargo test --test support_doc` rewrites it).

use crate::tgsi::ast::Processor;
use crate::tgsi::opcodes::{ALL, FlowRole, Opcode, OperandType, StageMask, Status};

/// The outcome of one probe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Support {
    /// Lowers to Valhall.
    Lowered,
    /// Handled by the control-flow lowering (it has no instruction of its own).
    ControlFlow,
    /// Rejected: the compiler's message.
    Rejected(String),
}

/// The stage a probe for `opcode` runs in.
fn probe_stage(opcode: Opcode) -> Option<Processor> {
    let stages = opcode.info().stages;
    if stages.contains(StageMask::FS) {
        Some(Processor::Frag)
    } else if stages.contains(StageMask::CS) {
        Some(Processor::Comp)
    } else if stages.contains(StageMask::VS) {
        Some(Processor::Vert)
    } else {
        None
    }
}

/// A probe shader using `opcode` once, or `None` when it cannot be written in text.
pub fn probe_text(opcode: Opcode) -> Option<String> {
    let info = opcode.info();
    let stage = probe_stage(opcode)?;
    let mut text = String::new();
    text.push_str(stage.name());
    text.push('\n');
    if stage == Processor::Frag {
        text.push_str("DCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\n");
    } else if stage == Processor::Vert {
        text.push_str("DCL IN[0]\nDCL OUT[0], POSITION\n");
    }
    text.push_str("DCL SAMP[0]\nDCL SVIEW[0], 2D, FLOAT\nDCL BUFFER[0]\nDCL TEMP[0..3]\n");
    if matches!(opcode, Opcode::Bgnfor | Opcode::Endfor) {
        text.push_str("DCL LOOP[0]\n");
    }
    text.push_str("IMM[0] FLT32 {    0.5000,     1.0000,     2.0000,     4.0000}\n");
    let sixty_four = info
        .dst_types
        .iter()
        .chain(info.src_types)
        .any(|t| matches!(t, OperandType::D | OperandType::I64 | OperandType::U64));
    let mut operands: Vec<String> = Vec::new();
    for (k, _) in (0..info.num_dst).enumerate() {
        let mask = if sixty_four { ".xy" } else { "" };
        operands.push(format!("TEMP[{k}]{mask}"));
    }
    for (k, ty) in info.src_types.iter().enumerate() {
        operands.push(match (opcode, k, ty) {
            // FBFETCH reads a COLOR output, the INTERP_* opcodes a varying input.
            (Opcode::Fbfetch, 0, _) => "OUT[0]".to_string(),
            (Opcode::InterpCentroid | Opcode::InterpSample | Opcode::InterpOffset, 0, _) => "IN[0]".to_string(),
            // Matrix products read up to four rows from src1 on: TEMP[0..3] are declared.
            (
                Opcode::M4x4 | Opcode::M4x3 | Opcode::M3x4 | Opcode::M3x3 | Opcode::M3x2 | Opcode::Multiplymatrix,
                1,
                _,
            ) => "TEMP[0]".to_string(),
            (_, _, OperandType::Samp) => "SAMP[0]".to_string(),
            (_, _, OperandType::Sview) => "SVIEW[0]".to_string(),
            (_, _, OperandType::Res) => "BUFFER[0]".to_string(),
            _ => format!("TEMP[{}]", 1 + k % 3),
        });
    }
    if info.src_types.len() < usize::from(info.num_src) {
        for k in info.src_types.len()..usize::from(info.num_src) {
            operands.push(format!("TEMP[{}]", 1 + k % 3));
        }
    }
    if info.has_texture_target {
        operands.push("2D".to_string());
    }
    // Initialise the temporaries so the probe reads defined values.
    let mut body =
        vec!["MOV TEMP[1], IN[0]".to_string(), "MOV TEMP[2], IMM[0]".into(), "MOV TEMP[3], IMM[0].wzyx".into()];
    if stage == Processor::Comp {
        body = vec!["MOV TEMP[1], IMM[0]".into(), "MOV TEMP[2], IMM[0]".into(), "MOV TEMP[3], IMM[0].wzyx".into()];
    }
    let line = if operands.is_empty() {
        opcode.name().to_string()
    } else {
        format!("{} {}", opcode.name(), operands.join(", "))
    };
    // Opcodes that only make sense inside or around a construct get one.
    match opcode {
        Opcode::Bgnfor => body.extend(["BGNFOR LOOP[0], TEMP[1]".into(), "ENDFOR LOOP[0]".into()]),
        Opcode::Endfor => body.extend(["BGNFOR LOOP[0], TEMP[1]".into(), "ENDFOR LOOP[0]".into()]),
        Opcode::Rep | Opcode::Endrep => body.extend(["REP TEMP[1]".into(), "ENDREP".into()]),
        Opcode::Breakc => body.extend(["BGNLOOP".into(), line, "ENDLOOP".into()]),
        Opcode::Ifc => body.extend([line, "ENDIF".into()]),
        Opcode::Loop | Opcode::EndloopLegacy => body.extend(["LOOP".into(), "ENDLOOP".into()]),
        _ => body.push(line),
    }
    if matches!(stage, Processor::Frag | Processor::Vert) {
        body.push("MOV OUT[0], TEMP[0]".into());
    }
    body.push("END".into());
    for (n, line) in body.iter().enumerate() {
        text.push_str(&format!("{n:3}: {line}\n"));
    }
    Some(text)
}

/// Tries `opcode` through check and lowering.
pub fn probe(opcode: Opcode) -> Support {
    let info = opcode.info();
    if matches!(
        info.flow,
        Some(
            FlowRole::If
                | FlowRole::Else
                | FlowRole::EndIf
                | FlowRole::LoopBegin
                | FlowRole::LoopEnd
                | FlowRole::Break
                | FlowRole::Continue
                | FlowRole::Switch
                | FlowRole::Case
                | FlowRole::Default
                | FlowRole::EndSwitch
                | FlowRole::Call
                | FlowRole::Return
                | FlowRole::SubBegin
                | FlowRole::SubEnd
                | FlowRole::End
        )
    ) && !matches!(
        opcode,
        Opcode::Bgnfor
            | Opcode::Endfor
            | Opcode::Rep
            | Opcode::Endrep
            | Opcode::Loop
            | Opcode::EndloopLegacy
            | Opcode::Ifc
            | Opcode::Breakc
            | Opcode::Callnz
    ) {
        return Support::ControlFlow;
    }
    let Some(text) = probe_text(opcode) else {
        return Support::Rejected(
            "only meaningful in geometry or tessellation shaders, which Valhall runs through no path of this compiler"
                .into(),
        );
    };
    let program = match crate::tgsi::parse(&text) {
        Ok(p) => p,
        Err(e) => return Support::Rejected(format!("probe does not parse: {}", e.0[0].message)),
    };
    let diags = crate::tgsi::check(&program);
    if let Some(e) = diags.iter().find(|d| d.is_error()) {
        return Support::Rejected(format!("probe rejected by the checker: {}", e.message));
    }
    match super::lower(&program, &super::Options::default()) {
        Ok(_) => Support::Lowered,
        Err(e) => {
            let d = &e.0[0];
            let note = d.notes.first().map(|n| n.trim_start_matches("note: ").to_string());
            Support::Rejected(note.unwrap_or_else(|| d.message.clone()))
        }
    }
}

/// The markdown page listing every opcode's state.
pub fn report() -> String {
    let mut out = String::new();
    out.push_str("# TGSI opcode support\n\n");
    out.push_str("Generated by `tgsi2va::lower::support::report` (regenerate with\n");
    out.push_str("`BLESS=1 cargo test --test support_doc`): every opcode of the table is compiled in a small\n");
    out.push_str("probe shader (a fragment shader when the opcode is allowed there, else compute or vertex) and\n");
    out.push_str("the outcome is recorded. *lowered*: compiles to Valhall; *control flow*: handled by the\n");
    out.push_str("structured control-flow lowering; otherwise the reason the compiler gives.\n\n");
    let mut counts = [0usize; 3];
    let mut sections: [(Status, &str, String); 4] = [
        (Status::Current, "Current opcodes (Mesa 25.0.7)", String::new()),
        (Status::Gap, "Unassigned opcode numbers", String::new()),
        (Status::Removed, "Removed opcodes", String::new()),
        (Status::Alias, "Alternative spellings (Mesa 7.5)", String::new()),
    ];
    for &op in ALL.iter() {
        let info = op.info();
        let state = probe(op);
        let (label, note) = match &state {
            Support::Lowered => ("lowered", String::new()),
            Support::ControlFlow => ("control flow", String::new()),
            Support::Rejected(why) => ("rejected", why.replace('|', "\\|")),
        };
        counts[match state {
            Support::Lowered => 0,
            Support::ControlFlow => 1,
            Support::Rejected(_) => 2,
        }] += 1;
        let section = sections.iter_mut().find(|s| s.0 == info.status).expect("every status has a section");
        section.2.push_str(&format!("| {} | `{}` | {label} | {note} |\n", info.number, info.name));
    }
    out.push_str(&format!(
        "Summary: {} lowered, {} control flow, {} rejected, of {} opcodes.\n\n",
        counts[0],
        counts[1],
        counts[2],
        ALL.len()
    ));
    for (_, title, rows) in sections {
        out.push_str(&format!("## {title}\n\n| number | opcode | state | note |\n| --- | --- | --- | --- |\n{rows}\n"));
    }
    out.pop();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_classify_known_opcodes() {
        assert_eq!(probe(Opcode::Add), Support::Lowered);
        assert_eq!(probe(Opcode::Sub), Support::Lowered, "legacy SUB lowers by its recipe");
        assert_eq!(probe(Opcode::If), Support::ControlFlow);
        assert!(matches!(probe(Opcode::Emit), Support::Rejected(_)));
        assert!(probe_text(Opcode::Tex).unwrap().contains("TEX TEMP[0], TEMP[1], SAMP[0], 2D"));
    }
}
