//! Texture opcodes, sampled only through the shared procedural model (`exec::texture`).
//!
//! Coordinates, shadow references, biases and LODs are taken from the operands as tgsi.rst
//! places them per target; the model defines filtering, LOD selection and texel values.
//! A lane's result is exact when its float inputs are exact, or when the result is the same
//! at every corner of the inputs' error box; otherwise unconstrained.

use super::InterpError;
use super::alu::{self, Kind};
use super::machine::{Machine, Reg};
use super::value::{self as v, Val};
use crate::exec::LANES;
use crate::exec::texture::{DEFAULT_SAMPLES, Dim, SampleCoords, TexelKind, Texture, cube_project, lod_to_fixed88};
use crate::tgsi::ast::*;
use crate::tgsi::opcodes::Opcode;

/// Texture and sampler-view opcodes: the ones this module executes.
pub fn is_texture(op: Opcode) -> bool {
    use Opcode as O;
    sample_style(op)
        || matches!(
            op,
            O::Tex
                | O::Txp
                | O::Txb
                | O::Txl
                | O::Txd
                | O::Txf
                | O::TexLz
                | O::TxfLz
                | O::Tex2
                | O::Txb2
                | O::Txl2
                | O::Tg4
                | O::Txq
                | O::TxqLz
                | O::Txqs
                | O::Lodq
        )
}

/// How a target lays out its coordinates in the coordinate operand.
#[derive(Clone, Copy, Debug)]
struct Layout {
    dim: Dim,
    array: bool,
    shadow: bool,
    /// Number of (s, t, r) coordinates (cube: the 3 direction components).
    coords: usize,
    /// Component holding the array layer.
    layer: Option<usize>,
    /// Component holding the shadow reference for TEX-style opcodes.
    reference: Option<usize>,
    /// A multisample target (its default texture has `DEFAULT_SAMPLES` samples).
    msaa: bool,
}

fn layout(target: TextureTarget, span: crate::diag::Span) -> Result<Layout, InterpError> {
    use TextureTarget as T;
    let msaa = matches!(target.canonical(), T::Msaa2D | T::ArrayMsaa2D);
    let l =
        |dim, array, shadow, coords, layer, reference| Layout { dim, array, shadow, coords, layer, reference, msaa };
    Ok(match target.canonical() {
        T::Buffer => l(Dim::Buffer, false, false, 1, None, None),
        T::Tex1D => l(Dim::D1, false, false, 1, None, None),
        T::Tex2D | T::Msaa2D => l(Dim::D2, false, false, 2, None, None),
        T::Rect => l(Dim::Rect, false, false, 2, None, None),
        T::Tex3D => l(Dim::D3, false, false, 3, None, None),
        T::Cube => l(Dim::Cube, false, false, 3, None, None),
        T::Array1D => l(Dim::D1, true, false, 1, Some(1), None),
        T::Array2D | T::ArrayMsaa2D => l(Dim::D2, true, false, 2, Some(2), None),
        T::CubeArray => l(Dim::Cube, true, false, 3, Some(3), None),
        T::Shadow1D => l(Dim::D1, false, true, 1, None, Some(2)),
        T::Shadow2D => l(Dim::D2, false, true, 2, None, Some(2)),
        T::ShadowRect => l(Dim::Rect, false, true, 2, None, Some(2)),
        T::ShadowArray1D => l(Dim::D1, true, true, 1, Some(1), Some(2)),
        T::ShadowArray2D => l(Dim::D2, true, true, 2, Some(2), Some(3)),
        T::ShadowCube => l(Dim::Cube, false, true, 3, None, Some(3)),
        T::ShadowCubeArray => l(Dim::Cube, true, true, 3, Some(3), None),
        _ => return Err(InterpError::unsupported(span, format!("texture target {} has no meaning", target.name()))),
    })
}

/// The LOD of a sampling operation.
#[derive(Clone, Copy)]
enum LodMode {
    /// Implicit (fragment shaders; LOD 0 elsewhere), plus an optional bias operand component.
    Implicit(Option<(usize, usize)>),
    /// Explicit LOD from (source, component).
    Explicit(usize, usize),
    Zero,
    /// Explicit derivatives in sources (ddx, ddy).
    Grad(usize, usize),
}

/// Evaluates `eval` at the nominal float inputs; exact when every input is exact or the result
/// is the same at every corner of the inputs' error box.
fn robust(inputs: &[Val], eval: impl Fn(&[f32]) -> [u32; 4]) -> [Val; 4] {
    let nominal: Vec<f32> = inputs.iter().map(|x| x.float()).collect();
    let r = eval(&nominal);
    let inexact: Vec<usize> = (0..inputs.len()).filter(|&k| !inputs[k].is_exact()).collect();
    if inexact.is_empty() {
        return r.map(Val::exact);
    }
    if inexact.len() > 8 || inexact.iter().any(|&k| inputs[k].interval().is_none()) {
        return r.map(Val::unknown);
    }
    for corner in 0..(1u32 << inexact.len()) {
        let mut point = nominal.clone();
        for (bit, &k) in inexact.iter().enumerate() {
            let (lo, hi) = inputs[k].interval().unwrap_or((0.0, 0.0));
            point[k] = if corner & (1 << bit) != 0 { v::round_up(hi) } else { v::round_down(lo) };
        }
        if eval(&point) != r {
            return r.map(Val::unknown);
        }
    }
    r.map(Val::exact)
}

/// The model's nearest sample with integer texel offsets (cube maps take none).
fn sample_offset(tex: &Texture, c: SampleCoords, lod: i32, off: [i32; 3]) -> [u32; 4] {
    let offset = if tex.dim == Dim::Cube { [0; 3] } else { off };
    tex.sample(SampleCoords { offset, ..c }, lod)
}

fn gather_offset(tex: &Texture, c: SampleCoords, component: usize, off: [i32; 3]) -> [u32; 4] {
    let offset = if tex.dim == Dim::Cube { [0; 3] } else { off };
    tex.gather(SampleCoords { offset, ..c }, component)
}

/// TXD/SAMPLE_D's LOD on cube maps, which the compiler computes with ALU instructions (Mesa's
/// `lower_gradient_cube_map`; `src/lower/texture.rs` `cube_gradient_lod` emits the same
/// operations in the same order): Q = the direction with its major axis last (z if
/// `|z| ≥ max(|x|, |y|)`, else y if `|y| ≥ max(|x|, |z|)`, else x; orders xyz, xzy, yzx) and
/// dQ likewise, `r = rcp(Q.z)`, per direction `e_i = r · fma(Q_i · r, −dQ.z, dQ_i)`,
/// `M = max(fma(e_1, e_1, e_0²), …)`, `lod = fma(log2(L · (L · M)), 0.5, −1)` with L the
/// face width. Approximate steps (rcp, log2) carry their error bounds; a comparison that
/// the inputs' errors could flip makes the LOD unconstrained.
fn cube_gradient_lod(p: [Val; 3], ddx: [Val; 3], ddy: [Val; 3], width: u32) -> Val {
    let (ax, ay, az) = (v::abs(p[0]), v::abs(p[1]), v::abs(p[2]));
    let (z_major, z_robust) = v::compare(az, v::max(ax, ay), |a, b| a >= b);
    let (y_major, y_robust) = v::compare(ay, v::max(ax, az), |a, b| a >= b);
    if !z_robust || !y_robust {
        return Val::unknown(0);
    }
    let order = if z_major {
        [0, 1, 2]
    } else if y_major {
        [0, 2, 1]
    } else {
        [1, 2, 0]
    };
    let q = order.map(|k| p[k]);
    let r = alu::rcp(q[2]);
    let scaled = [v::mul(q[0], r), v::mul(q[1], r)];
    let square = |d: [Val; 3]| {
        let dq = order.map(|k| d[k]);
        let e = [0, 1].map(|i| v::mul(r, v::fma(scaled[i], v::neg(dq[2]), dq[i])));
        v::fma(e[1], e[1], v::mul(e[0], e[0]))
    };
    let m = v::max(square(ddx), square(ddy));
    let l = Val::f(width as f32);
    let lg = alu::lg2(v::mul(l, v::mul(l, m)));
    v::fma(lg, Val::f(0.5), Val::f(-1.0))
}

impl Machine<'_, '_> {
    /// The texture bound to `unit`, checked against the target it is used with.
    fn texture_for(&self, unit: u32, lay: &Layout, kind: TexelKind) -> Result<Texture, InterpError> {
        match self.inputs.textures.get(&unit) {
            Some(t) => {
                if t.dim != lay.dim || t.array != lay.array {
                    return Err(InterpError::runtime(
                        self.op_span(),
                        format!(
                            "texture unit {unit} is described as {:?}{} but used as {:?}{}",
                            t.dim,
                            if t.array { " array" } else { "" },
                            lay.dim,
                            if lay.array { " array" } else { "" }
                        ),
                    ));
                }
                Ok(t.clone())
            }
            None => {
                let texture = Texture::default_for(lay.dim, lay.array, kind, unit);
                Ok(if lay.msaa { texture.multisampled(DEFAULT_SAMPLES) } else { texture })
            }
        }
    }

    /// The source naming the unit and its unit: `unit` when the operand is indexed indirectly
    /// (resolved per lane by [`Machine::texture`]), else its index.
    fn operand_index(&self, files: &[File], unit: Option<u32>) -> Option<(usize, u32)> {
        self.inst()
            .src
            .iter()
            .enumerate()
            .find(|(_, s)| files.contains(&s.register.file))
            .map(|(i, s)| (i, unit.unwrap_or(s.register.index.value.max(0) as u32)))
    }

    /// The operand that selects the texture: SVIEW (or RES) for SAMPLE-style opcodes, SAMP for
    /// the others (the sampler of SAMPLE-style opcodes is ignored, see docs/interpreter.md).
    fn unit_files(op: Opcode) -> &'static [File] {
        if sample_style(op) { &[File::SamplerView, File::LegacyResource] } else { &[File::Sampler] }
    }

    /// A texture opcode. An indirectly indexed unit (`SAMP[ADDR[0].x + 1]`, `SVIEW[ADDR[0].x]`)
    /// is resolved per lane as `offset + address`, like the compiler's handle (which records
    /// every unit of the declaration the bracket may reach, `src/lower/texture.rs`): lanes are
    /// run in groups of equal unit. A unit outside the declarations of the file (with an
    /// ArrayID: outside that declaration) is undefined in GL, so those lanes get unconstrained
    /// results; an inexact address makes the lane uncertain.
    pub fn texture(&mut self, op: Opcode) -> Result<(), InterpError> {
        let files = Self::unit_files(op);
        let Some(reg) = self.inst().src.iter().find(|s| files.contains(&s.register.file)).map(|s| s.register) else {
            return self.texture_unit(op, None);
        };
        let Some(ind) = reg.index.indirect else { return self.texture_unit(op, None) };
        let exec = self.exec;
        let mut groups: std::collections::BTreeMap<u32, u8> = std::collections::BTreeMap::new();
        let mut undefined = 0u8;
        for l in Machine::lanes(exec) {
            match self.address(&ind, l) {
                None => {
                    self.tainted |= 1 << l;
                    undefined |= 1 << l;
                }
                Some(a) => {
                    let unit = reg.index.value as i64 + a;
                    if self.p.in_range(reg.file, 0, unit, reg.index.array_id) {
                        *groups.entry(unit as u32).or_default() |= 1 << l;
                    } else {
                        undefined |= 1 << l;
                    }
                }
            }
        }
        let mut result = Ok(());
        for (&unit, &lanes) in &groups {
            self.exec = lanes;
            result = self.texture_unit(op, Some(unit));
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() && undefined != 0 {
            self.exec = undefined;
            result = self.write_all(&[[Val::unknown(0); 4]; LANES], Kind::Int);
        }
        self.exec = exec;
        result
    }

    fn offsets(&self, lane: usize) -> Result<[i32; 3], InterpError> {
        let mut off = [0i32; 3];
        if let Some(o) = self.inst().texture_offsets.first() {
            let reg = Register { file: o.file, dimension: None, index: Index::direct(o.index) };
            for (k, comp) in o.swizzle.iter().enumerate() {
                off[k] = self.read_reg(&reg, lane, comp.index())?.int();
            }
        }
        Ok(off)
    }

    /// A texture opcode on `unit` (the operand's own index when `None`) in the active lanes.
    fn texture_unit(&mut self, op: Opcode, unit_override: Option<u32>) -> Result<(), InterpError> {
        use Opcode as O;
        let inst = self.inst();
        let span = self.op_span();
        let sample_style = sample_style(op);
        let (unit_src, unit, target, kind) = if sample_style {
            let (i, unit) = self
                .operand_index(&[File::SamplerView, File::LegacyResource], unit_override)
                .ok_or_else(|| InterpError::runtime(span, "no sampler view operand"))?;
            let view = self.p.views.get(&unit).copied().ok_or_else(|| {
                InterpError::unsupported(span, format!("SVIEW[{unit}] is used but not declared with a target"))
            })?;
            let kind = match view.return_type {
                ReturnType::Sint => TexelKind::Sint,
                ReturnType::Uint => TexelKind::Uint,
                _ => TexelKind::Float,
            };
            (i, unit, view.target, kind)
        } else {
            let (i, unit) = self
                .operand_index(&[File::Sampler], unit_override)
                .ok_or_else(|| InterpError::runtime(span, "no sampler operand"))?;
            let target = inst.texture_target.ok_or_else(|| InterpError::runtime(span, "no texture target"))?;
            let view = self.p.views.get(&unit).copied();
            let kind = match view.map(|v| v.return_type) {
                Some(ReturnType::Sint) => TexelKind::Sint,
                Some(ReturnType::Uint) => TexelKind::Uint,
                _ => TexelKind::Float,
            };
            (i, unit, target, kind)
        };
        let lay = layout(target, span)?;
        let tex = self.texture_for(unit, &lay, kind)?;
        let swizzle = if sample_style { inst.src[unit_src].swizzle } else { IDENTITY_SWIZZLE };
        let mut r: Reg = [[Val::ZERO; 4]; LANES];
        let mut rkind = if kind == TexelKind::Float { Kind::Float } else { Kind::Int };
        match op {
            O::Txq | O::TxqLz | O::Sviewinfo => {
                let levels = tex.level_count();
                let lod = if op == O::TxqLz { None } else { Some(self.src(0)?) };
                for l in Machine::lanes(self.exec) {
                    let level = lod.map_or(Val::ZERO, |s| s[l][0]);
                    let in_range = (level.int() as i64) >= 0 && (level.int() as i64) < levels as i64;
                    let size = tex.query_size(if in_range { level.int() as u32 } else { 0 });
                    r[l] = std::array::from_fn(|c| {
                        if c == 3 {
                            Val::exact(levels)
                        } else if !level.is_exact() {
                            Val::unknown(size[c])
                        } else if in_range {
                            Val::exact(size[c])
                        } else if op == O::Sviewinfo {
                            Val::ZERO
                        } else {
                            Val::unknown(0)
                        }
                    });
                    if tex.dim == Dim::Buffer {
                        r[l][3] = Val::exact(size[3]);
                    }
                }
                return self.write_all(&r, Kind::Int);
            }
            O::Txqs | O::SampleInfo => {
                // The resource's sample count (1 for single-sample textures); SAMPLE_INFO's
                // y, z, w are 0 and its view swizzle applies, TXQS's y, z, w are undefined.
                let info = [tex.samples, 0, 0, 0];
                let rest = if op == O::SampleInfo { Val::ZERO } else { Val::unknown(0) };
                for l in 0..LANES {
                    r[l] = if op == O::SampleInfo {
                        std::array::from_fn(|c| Val::exact(info[swizzle[c].index()]))
                    } else {
                        [Val::exact(tex.samples), rest, rest, rest]
                    };
                }
                return self.write_all(&r, Kind::Int);
            }
            O::Txf | O::TxfLz | O::SampleI | O::SampleIMs => {
                let coord = self.src(0)?;
                let msaa = lay.msaa;
                // The sample of a multisample fetch: TXF's src0.w, SAMPLE_I_MS's src2.x
                // (SAMPLE_I reads sample 0).
                let sample_src = match op {
                    // The Mesa 7.11–8.0 LOAD_MS form has no sample operand: sample 0.
                    O::SampleIMs if inst.src.len() > 2 => Some(self.src(2)?),
                    O::Txf | O::TxfLz if msaa => Some(coord),
                    _ => None,
                };
                let sample_comp = if op == O::SampleIMs { 0 } else { 3 };
                for l in Machine::lanes(self.exec) {
                    let off = self.offsets(l)?;
                    let c = coord[l];
                    let ci = |k: usize| c[k].int();
                    // Wrapping (the hardware's 32-bit addition): any coordinate near the ends of
                    // the i32 range is outside every level either way.
                    let at = |k: usize| ci(k).wrapping_add(off[k]);
                    let level = if op == O::TxfLz || msaa || lay.dim == Dim::Buffer { 0 } else { ci(3) };
                    let (x, mut y, mut z, mut layer) = (at(0), 0, 0, 0);
                    match (lay.dim, lay.layer) {
                        (Dim::D1, Some(_)) => layer = ci(1),
                        (Dim::D2 | Dim::Rect | Dim::Cube, Some(_)) => {
                            y = at(1);
                            layer = ci(2);
                        }
                        (Dim::D2 | Dim::Rect, None) => y = at(1),
                        (Dim::Cube, None) => {
                            y = at(1);
                            layer = ci(2);
                        }
                        (Dim::D3, _) => {
                            y = at(1);
                            z = at(2);
                        }
                        _ => {}
                    }
                    let sample = sample_src.map_or(Val::ZERO, |s| s[l][sample_comp]);
                    let texel = if level < 0 || layer < 0 {
                        [0; 4]
                    } else {
                        tex.texel_sample(level as u32, layer as u32, x, y, z, sample.bits)
                    };
                    let exact = c.iter().all(|v| v.is_exact()) && sample.is_exact();
                    r[l] = std::array::from_fn(|k| {
                        let t = texel[swizzle[k].index()];
                        if exact { Val::exact(t) } else { Val::unknown(t) }
                    });
                }
                return self.write_all(&r, rkind);
            }
            _ => {}
        }
        // Sampling, gathering and LOD queries.
        let coord = self.src(0)?;
        let extra: Vec<Reg> = (1..inst.src.len())
            .filter(|&i| i != unit_src && inst.src[i].register.file != File::Sampler)
            .map(|i| self.src(i))
            .collect::<Result<_, _>>()?;
        // `extra[k]` is the k-th source after the coordinate that is neither the texture nor a
        // sampler (SAMPLE_B's bias is `extra[0]`, SAMPLE_D's derivatives `extra[0..2]`).
        let x1 = |k: usize| extra.get(k);
        let mut ref_src: Option<(usize, usize)> = None; // (0 = coordinate, 1.. = extra+1, component)
        let mut lod_mode = LodMode::Implicit(None);
        let mut project = false;
        let mut gather_component: Option<usize> = None;
        match op {
            O::Tex => ref_src = lay.reference.map(|c| (0, c)),
            O::Txp => {
                ref_src = lay.reference.map(|c| (0, c));
                project = true;
            }
            O::Txb => {
                ref_src = lay.shadow.then_some((0, 2));
                lod_mode = LodMode::Implicit(Some((0, 3)));
            }
            O::Txl => {
                ref_src = lay.shadow.then_some((0, 2));
                lod_mode = LodMode::Explicit(0, 3);
            }
            O::TexLz => {
                ref_src = lay.reference.map(|c| (0, c));
                lod_mode = LodMode::Zero;
            }
            O::Txd => {
                ref_src = lay.reference.map(|c| (0, c));
                lod_mode = LodMode::Grad(1, 2);
            }
            O::Tex2 => ref_src = lay.shadow.then_some((1, 0)),
            O::Txb2 | O::Txl2 => {
                ref_src = if target.canonical() == TextureTarget::ShadowCubeArray {
                    Some((1, 1))
                } else {
                    lay.reference.map(|c| (0, c))
                };
                lod_mode = if op == O::Txb2 { LodMode::Implicit(Some((1, 0))) } else { LodMode::Explicit(1, 0) };
            }
            O::Tg4 => {
                if lay.shadow {
                    ref_src = if target.canonical() == TextureTarget::ShadowCubeArray {
                        Some((1, 0))
                    } else {
                        lay.reference.map(|c| (0, c))
                    };
                }
                gather_component = Some(0);
            }
            // The gathered component is the sampler operand's swizzle `.x` (llvmpipe's
            // convention, as the compiler's); the view's swizzle applies to the result.
            O::Gather4 => gather_component = Some(inst.src[2].swizzle[0].index()),
            O::Sample => {}
            O::SampleB => lod_mode = LodMode::Implicit(Some((1, 0))),
            O::SampleL => lod_mode = LodMode::Explicit(1, 0),
            O::SampleC => ref_src = Some((1, 0)),
            O::SampleCLz => {
                ref_src = Some((1, 0));
                lod_mode = LodMode::Zero;
            }
            O::SampleD => lod_mode = LodMode::Grad(1, 2),
            O::Lodq | O::Lod => {}
            _ => return Err(InterpError::unsupported(span, format!("`{}` is not supported", inst.opcode.name()))),
        }
        if lay.dim == Dim::Buffer {
            return Err(InterpError::unsupported(span, "sampling a BUFFER target has no meaning (use TXF)"));
        }
        let value_of = |src: usize, comp: usize, lane: usize| -> Val {
            if src == 0 { coord[lane][comp] } else { x1(src - 1).map_or(Val::ZERO, |r| r[lane][comp]) }
        };
        // Per-lane float inputs: coordinates (projected for TXP), layer, reference.
        let lane_inputs = |lane: usize| -> Vec<Val> {
            let mut c = coord[lane];
            if project {
                for k in 0..3 {
                    if k < lay.coords || ref_src == Some((0, k)) {
                        c[k] = alu::div(c[k], coord[lane][3]);
                    }
                }
            }
            let used = |k: usize| if k < lay.coords { c[k] } else { Val::ZERO };
            let mut ins = vec![used(0), used(1), used(2)];
            ins.push(lay.layer.map_or(Val::ZERO, |k| c[k]));
            let reference = match ref_src {
                Some((0, comp)) => c[comp],
                Some((s, comp)) => value_of(s, comp, lane),
                None => Val::ZERO,
            };
            ins.push(reference);
            ins
        };
        let make_coords = |ins: &[f32]| -> SampleCoords {
            let mut sc = SampleCoords { s: ins[0], t: ins[1], r: ins[2], layer: ins[3], ..SampleCoords::default() };
            if lay.dim == Dim::Cube {
                let (face, s, t) = cube_project(ins[0], ins[1], ins[2]);
                sc.face = face;
                sc.s = s;
                sc.t = t;
                sc.r = 0.0;
            }
            if ref_src.is_some() {
                sc.reference = Some(ins[4]);
            }
            sc
        };
        let stc = |sc: &SampleCoords| -> [f32; 3] { [sc.s, sc.t, if lay.dim == Dim::D3 { sc.r } else { 0.0 }] };
        // Implicit LOD of the quad: None when it cannot be determined exactly.
        let is_fs = self.p.processor == Processor::Frag;
        let single_level = tex.level_count() == 1;
        let needs_quad = matches!(lod_mode, LodMode::Implicit(_)) || matches!(op, O::Lodq | O::Lod);
        let mut quad_lod: Option<i32> = Some(0);
        let mut quad = [[0.0f32; 3]; LANES];
        let mut quad_known = true;
        if needs_quad && is_fs {
            for (l, q) in quad.iter_mut().enumerate() {
                // An inactive lane (killed, or in another branch) and an uncertain one (it may
                // have taken another path) leave the quad's LOD open.
                if self.exec & !self.tainted & (1 << l) == 0 {
                    quad_known = false;
                    continue;
                }
                let ins = lane_inputs(l);
                if ins.iter().take(3).any(|x| !x.is_exact()) {
                    quad_known = false;
                }
                let nominal: Vec<f32> = ins.iter().map(|x| x.float()).collect();
                *q = stc(&make_coords(&nominal));
            }
            quad_lod = if quad_known || single_level { Some(tex.implicit_lod(&quad)) } else { None };
            // Approximate coordinates: the lookup is still determined when every quad within
            // their error intervals selects the same level (plain implicit LOD only; a bias or a
            // LOD query reads the LOD itself).
            let active = (0..LANES).all(|l| self.exec & !self.tainted & (1 << l) != 0);
            if quad_lod.is_none() && active && matches!(lod_mode, LodMode::Implicit(None)) && lay.dim != Dim::Cube {
                let lane_box = |l: usize| -> Option<[(f64, f64); 3]> {
                    let ins = lane_inputs(l);
                    let c = |k: usize| ins[k].interval().filter(|(lo, hi)| lo.is_finite() && hi.is_finite());
                    Some([c(0)?, c(1)?, if lay.dim == Dim::D3 { c(2)? } else { (0.0, 0.0) }])
                };
                if let (Some(b0), Some(b1), Some(b2), Some(b3)) = (lane_box(0), lane_box(1), lane_box(2), lane_box(3)) {
                    let boxes = [b0, b1, b2, b3];
                    let (low, high) = tex.implicit_lod_bounds(&boxes);
                    let nominal = tex.implicit_lod(&quad);
                    let level = tex.select_level(nominal);
                    if tex.select_level(low) == level && tex.select_level(high) == level {
                        quad_lod = Some(nominal);
                    }
                }
            }
        }
        if matches!(op, O::Lodq | O::Lod) {
            let (clamped, lod) = if is_fs { tex.query_lod(&quad) } else { (0.0, 0.0) };
            let exact = !is_fs || quad_known;
            let mk = |x: f32| if exact { Val::f(x) } else { Val::unknown(x.to_bits()) };
            let zw = if op == O::Lod { Val::f(0.0) } else { Val::unknown(0) };
            for l in Machine::lanes(self.exec) {
                r[l] = [mk(clamped), mk(lod), zw, zw];
            }
            return self.write_all(&r, Kind::Float);
        }
        for l in Machine::lanes(self.exec) {
            let off = self.offsets(l)?;
            let mut ins = lane_inputs(l);
            let base = ins.len();
            // LOD inputs appended after the coordinate inputs.
            match lod_mode {
                LodMode::Implicit(Some((s, c))) | LodMode::Explicit(s, c) => ins.push(value_of(s, c, l)),
                LodMode::Grad(dx, dy) if lay.dim == Dim::Cube => {
                    // Cube maps: the explicit LOD the compiler computes (docs/interpreter.md).
                    let p = [coord[l][0], coord[l][1], coord[l][2]];
                    let ddx = [0, 1, 2].map(|k| value_of(dx, k, l));
                    let ddy = [0, 1, 2].map(|k| value_of(dy, k, l));
                    ins.push(cube_gradient_lod(p, ddx, ddy, tex.width));
                }
                LodMode::Grad(dx, dy) => {
                    for k in 0..3 {
                        ins.push(if k < lay.coords { value_of(dx, k, l) } else { Val::ZERO });
                    }
                    for k in 0..3 {
                        ins.push(if k < lay.coords { value_of(dy, k, l) } else { Val::ZERO });
                    }
                }
                _ => {}
            }
            if matches!(lod_mode, LodMode::Implicit(_)) && is_fs && quad_lod.is_none() {
                r[l] = [Val::unknown(0); 4];
                continue;
            }
            let gather_comp = match (op, gather_component) {
                (O::Tg4, Some(_)) if !lay.shadow => {
                    let c = value_of(1, 0, l);
                    if !c.is_exact() {
                        r[l] = [Val::unknown(0); 4];
                        continue;
                    }
                    Some(c.bits as usize & 3)
                }
                (_, g) => g,
            };
            let implicit = if is_fs { quad_lod.unwrap_or(0) } else { 0 };
            let eval = |x: &[f32]| -> [u32; 4] {
                let sc = make_coords(x);
                if let Some(comp) = gather_comp {
                    return gather_offset(&tex, sc, comp, off);
                }
                let lod = match lod_mode {
                    LodMode::Implicit(None) => implicit,
                    LodMode::Implicit(Some(_)) => implicit + lod_to_fixed88(x[base]),
                    LodMode::Explicit(..) => lod_to_fixed88(x[base]),
                    LodMode::Zero => 0,
                    LodMode::Grad(..) if lay.dim == Dim::Cube => lod_to_fixed88(x[base]),
                    LodMode::Grad(..) => {
                        tex.gradient_lod([x[base], x[base + 1], x[base + 2]], [x[base + 3], x[base + 4], x[base + 5]])
                    }
                };
                sample_offset(&tex, sc, lod, off)
            };
            let res = robust(&ins, eval);
            r[l] = std::array::from_fn(|k| res[swizzle[k].index()]);
        }
        if lay.shadow {
            rkind = Kind::Float;
        }
        self.write_all(&r, rkind)
    }
}

/// SAMPLE-style opcodes name their texture with an SVIEW (or legacy RES) operand; the others
/// with SAMP.
fn sample_style(op: Opcode) -> bool {
    use Opcode as O;
    matches!(
        op,
        O::Sample
            | O::SampleI
            | O::SampleIMs
            | O::SampleB
            | O::SampleC
            | O::SampleCLz
            | O::SampleD
            | O::SampleL
            | O::Gather4
            | O::Sviewinfo
            | O::Lod
            | O::SampleInfo
    )
}
