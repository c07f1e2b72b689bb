//! The run-time ABI of docs/metadata.md: building a machine from a blob's metadata and the
//! shared inputs (FAU words, preloaded registers, resources, memory), running every variant
//! of the blob, and mapping what the code stored back to TGSI `OUT[i]` registers.

use super::error::{EmuError, ErrorKind, err};
use super::fp;
use super::machine::{AttributeData, Machine, Options, Program, Stage, VaryingData};
use super::memory::{
    RegionKind, SAMPLE_POSITIONS, SAMPLE_POSITIONS_BASE, SSBO_STRIDE, Stream, TLS_BASE, TLS_STRIDE, UBO_BASE, UBO_SIZE,
    UBO_STRIDE, WLS_BASE, WLS_STRIDE, bytes_to_words, idvs_record, ssbo_address, words_to_bytes,
};
use crate::emit::meta::{FauSource, Metadata, Variant};
use crate::exec::io::{Inputs, Outputs, RegKey};
use crate::exec::texture::{Dim, TexelKind, Texture};
use crate::exec::{LANES, Lanes};
use crate::tgsi::ast::File;
use std::collections::{BTreeMap, BTreeSet};

fn meta_err<T>(message: impl Into<String>) -> Result<T, EmuError> {
    err(ErrorKind::Metadata, message)
}

/// Runs a compiled blob on the inputs (docs/emulator.md §1): every variant the metadata lists,
/// on a quad of four lanes, and returns the outputs in the interpreter's format.
pub fn run(blob: &[u8], meta: &Metadata, inputs: &Inputs) -> Result<Outputs, EmuError> {
    run_with(blob, meta, inputs, Options::default())
}

/// [`run`] with explicit options (the work-register count comes from each variant).
pub fn run_with(blob: &[u8], meta: &Metadata, inputs: &Inputs, options: Options) -> Result<Outputs, EmuError> {
    let stage = Stage::parse(&meta.stage)
        .ok_or_else(|| EmuError::new(ErrorKind::Metadata, format!("unknown stage `{}`", meta.stage)))?;
    if meta.arch != 9 && meta.arch != 10 {
        return meta_err(format!("arch {} is not a Valhall architecture (9 or 10)", meta.arch));
    }
    let mut programs = BTreeMap::new();
    for variant in &meta.variants {
        let program = load_variant(blob, variant).map_err(|e| e.in_variant(&variant.name))?;
        if programs.insert(variant.name.as_str(), (variant, program)).is_some() {
            return meta_err(format!("variant `{}` is listed twice", variant.name));
        }
    }
    let mut outputs = Outputs::default();
    let get = |name: &str| programs.get(name);
    let run_one = |name: &str| -> Result<Option<Machine>, EmuError> {
        let Some((variant, program)) = get(name) else { return Ok(None) };
        let mut m = prepare(meta, inputs, stage, variant, options).map_err(|e| e.in_variant(name))?;
        m.run(program).map_err(|e| e.in_variant(name))?;
        Ok(Some(m))
    };
    let expect = |names: &[&str]| -> Result<(), EmuError> {
        for name in programs.keys() {
            if !names.contains(name) {
                return meta_err(format!("a {} shader has no variant `{name}`", meta.stage));
            }
        }
        Ok(())
    };
    let last: Option<Machine> = match stage {
        Stage::Fragment | Stage::Compute => {
            expect(&["main"])?;
            let m = run_one("main")?.ok_or_else(|| EmuError::new(ErrorKind::Metadata, "no variant `main`"))?;
            if stage == Stage::Fragment {
                fragment_outputs(meta, &m, &mut outputs)?;
            }
            Some(m)
        }
        Stage::Vertex => {
            expect(&["position", "varying", "position_no_psiz"])?;
            let position = run_one("position")?
                .ok_or_else(|| EmuError::new(ErrorKind::Metadata, "vertex shader without a `position` variant"))?;
            let varying = run_one("varying")?;
            let no_psiz = run_one("position_no_psiz")?;
            vertex_outputs(meta, &position, varying.as_ref(), no_psiz.as_ref(), &mut outputs)?;
            varying.or(Some(position))
        }
    };
    if let Some(m) = last {
        for &i in &meta.ssbos {
            if let Some(r) = m.memory.region(RegionKind::Ssbo(i)) {
                outputs.buffers.insert(i, bytes_to_words(&r.data));
            }
        }
        for &unit in m.memory.images.keys() {
            if let Some(r) = m.memory.region(RegionKind::Image(unit)) {
                outputs.images.insert(unit, bytes_to_words(&r.data));
            }
        }
        outputs.killed = m.killed();
    }
    Ok(outputs)
}

/// Cuts a variant out of the blob and decodes it; checks the 128-byte alignment and the zero
/// padding of docs/metadata.md.
pub fn load_variant(blob: &[u8], v: &Variant) -> Result<Program, EmuError> {
    let (offset, size) = (v.offset as usize, v.size as usize);
    if offset % 128 != 0 {
        return err(ErrorKind::Blob, format!("variant offset {offset} is not a multiple of 128"));
    }
    if size % 8 != 0 {
        return err(ErrorKind::Blob, format!("variant size {size} is not a multiple of 8"));
    }
    let end = offset.checked_add(size).filter(|&e| e <= blob.len()).ok_or_else(|| {
        EmuError::new(
            ErrorKind::Blob,
            format!("variant {offset}..{} runs past the blob ({} bytes)", offset + size, blob.len()),
        )
    })?;
    if size > 0 {
        let padded = (end + 16).div_ceil(128) * 128;
        if padded > blob.len() || blob[end..padded].iter().any(|&b| b != 0) {
            return err(
                ErrorKind::Blob,
                format!("the code must be followed by zero padding up to byte {padded} (at least 16 bytes)"),
            );
        }
    }
    Program::from_bytes(&blob[offset..end])
}

/// The semantic name without its index (`GENERIC[3]` → `GENERIC`).
fn semantic_name(s: &str) -> &str {
    s.split('[').next().unwrap_or(s).trim()
}

fn parse_reg(text: &str) -> Result<RegKey, EmuError> {
    RegKey::parse(text).map_err(|e| EmuError::new(ErrorKind::Metadata, e))
}

/// The register of a declared system value (or FS POSITION/FACE input) with this semantic.
fn system_value(meta: &Metadata, semantic: &str) -> Result<Option<RegKey>, EmuError> {
    match meta.system_values.iter().find(|s| semantic_name(&s.semantic) == semantic) {
        Some(s) => parse_reg(&s.register).map(Some),
        None => Ok(None),
    }
}

/// The texture a TGSI target name describes (`None` for names that are not targets).
pub fn texture_for_target(target: &str, return_type: Option<&str>, unit: u32) -> Option<Texture> {
    let t = target.to_ascii_uppercase().replace("SHADOW", "");
    let (dim, array) = match t.as_str() {
        "BUFFER" => (Dim::Buffer, false),
        "1D" => (Dim::D1, false),
        "2D" | "2D_MSAA" => (Dim::D2, false),
        "3D" => (Dim::D3, false),
        "CUBE" => (Dim::Cube, false),
        "RECT" => (Dim::Rect, false),
        "1D_ARRAY" | "1DARRAY" => (Dim::D1, true),
        "2D_ARRAY" | "2DARRAY" | "2D_ARRAY_MSAA" => (Dim::D2, true),
        "CUBEARRAY" | "CUBE_ARRAY" => (Dim::Cube, true),
        _ => return None,
    };
    let kind = match return_type.map(str::to_ascii_uppercase).as_deref() {
        Some("SINT") => TexelKind::Sint,
        Some("UINT") => TexelKind::Uint,
        _ => TexelKind::Float,
    };
    let texture = Texture::default_for(dim, array, kind, unit);
    Some(if t.ends_with("MSAA") { texture.multisampled(crate::exec::texture::DEFAULT_SAMPLES) } else { texture })
}

/// Builds the machine for one variant: FAU, memory, environment and preloaded registers.
pub fn prepare(
    meta: &Metadata,
    inputs: &Inputs,
    stage: Stage,
    variant: &Variant,
    options: Options,
) -> Result<Machine, EmuError> {
    let mut m = Machine::new(stage);
    m.options = options;
    m.options.work_registers = match variant.work_registers {
        32 | 64 => variant.work_registers,
        n => return meta_err(format!("work_registers must be 32 or 64, not {n}")),
    };
    // Textures.
    for b in &meta.textures {
        let texture = match inputs.textures.get(&b.unit) {
            Some(t) => t.clone(),
            None => texture_for_target(&b.target, b.return_type.as_deref(), b.unit)
                .ok_or_else(|| EmuError::new(ErrorKind::Metadata, format!("unknown texture target `{}`", b.target)))?,
        };
        m.env.textures.insert(b.unit, texture);
    }
    for (unit, t) in &inputs.textures {
        m.env.textures.entry(*unit).or_insert_with(|| t.clone());
    }
    // Images (table 5), before the FAU words that hold their sizes.
    super::image::map_images(&mut m.memory, meta, inputs)?;
    // System values.
    let sv = |semantic: &str| -> Result<Option<Lanes>, EmuError> {
        Ok(system_value(meta, semantic)?.map(|r| inputs.register(r)))
    };
    let block_size: [u32; 3] = match sv("BLOCK_SIZE")? {
        Some(l) => [l[0][0], l[0][1], l[0][2]],
        None => meta.local_size.unwrap_or([1, 1, 1]),
    };
    // FAU words.
    for w in &meta.fau {
        if w.word >= 128 {
            return meta_err(format!("FAU word {} is beyond u127", w.word));
        }
        let value = match &w.source {
            FauSource::Literal { value } => *value,
            FauSource::Constant { buffer, index, component } => {
                if *component >= 4 {
                    return meta_err(format!("FAU word {}: component {component} is not 0–3", w.word));
                }
                inputs.register(RegKey::with_dimension(File::Const, *buffer, *index))[0][*component as usize]
            }
            FauSource::Sysval { name, component } => sysval(meta, inputs, &m, name, *component, block_size)?,
        };
        if m.uniforms[w.word as usize].replace(value).is_some() {
            return meta_err(format!("FAU word {} is described twice", w.word));
        }
    }
    // Memory: UBOs.
    let mut ubos: BTreeSet<u32> = meta.ubos.iter().copied().collect();
    ubos.extend(inputs.registers.keys().filter(|k| k.file == File::Const).filter_map(|k| k.dimension));
    for k in ubos {
        let mut data = vec![0u8; UBO_SIZE];
        for (key, lanes) in inputs.registers.range(RegKey::with_dimension(File::Const, k, 0)..) {
            if key.file != File::Const || key.dimension != Some(k) {
                break;
            }
            let at = 16 * key.index as usize;
            if at + 16 <= UBO_SIZE {
                data[at..at + 16].copy_from_slice(&words_to_bytes(&lanes[0]));
            }
        }
        m.memory.map(UBO_BASE + u64::from(k) * UBO_STRIDE, data, RegionKind::Ubo(k), false)?;
    }
    // SSBOs.
    let mut ssbos: BTreeSet<u32> = meta.ssbos.iter().copied().collect();
    ssbos.extend(inputs.buffers.keys());
    for i in ssbos {
        let words = inputs.buffers.get(&i).cloned().unwrap_or_default();
        if words.len() as u64 * 4 > SSBO_STRIDE {
            return err(ErrorKind::Inputs, format!("buffer {i} is larger than 4 GiB"));
        }
        m.memory.map(ssbo_address(i), words_to_bytes(&words), RegionKind::Ssbo(i), true)?;
    }
    // Workgroups (compute: lanes with the same BLOCK_ID share one).
    let block_ids = sv("BLOCK_ID")?;
    let mut groups: Vec<[u32; 3]> = Vec::new();
    for lane in 0..LANES {
        let id = match (&block_ids, stage) {
            (Some(l), Stage::Compute) => [l[lane][0], l[lane][1], l[lane][2]],
            _ => [0; 3],
        };
        let g = groups.iter().position(|x| *x == id).unwrap_or_else(|| {
            groups.push(id);
            groups.len() - 1
        });
        m.env.workgroup[lane] = g as u32;
    }
    if u64::from(meta.tls_size) > TLS_STRIDE || u64::from(meta.wls_size) > WLS_STRIDE {
        return meta_err("tls_size / wls_size beyond 16 MiB");
    }
    for lane in 0..LANES {
        let base = TLS_BASE + lane as u64 * TLS_STRIDE;
        m.env.tls_pointer[lane] = base;
        if meta.tls_size > 0 {
            m.memory.map(base, vec![0; meta.tls_size as usize], RegionKind::Tls(lane), true)?;
        }
        m.env.wls_pointer[lane] = WLS_BASE + u64::from(m.env.workgroup[lane]) * WLS_STRIDE;
    }
    if stage == Stage::Fragment {
        m.memory.map(SAMPLE_POSITIONS_BASE, SAMPLE_POSITIONS.to_vec(), RegionKind::SamplePositions, false)?;
    }
    if meta.wls_size > 0 {
        for g in 0..groups.len() as u32 {
            m.memory.map(
                WLS_BASE + u64::from(g) * WLS_STRIDE,
                vec![0; meta.wls_size as usize],
                RegionKind::Wls(g),
                true,
            )?;
        }
    }
    // Stage environment and preloaded registers.
    let mut preload: BTreeMap<u8, [u32; LANES]> = BTreeMap::new();
    match stage {
        Stage::Vertex => {
            let vertex = sv("VERTEXID")?.map_or(std::array::from_fn(|l| l as u32), |v| v.map(|x| x[0]));
            let instance = sv("INSTANCEID")?.map_or([0; LANES], |v| v.map(|x| x[0]));
            let draw = sv("DRAWID")?.map_or([0; LANES], |v| v.map(|x| x[0]));
            m.env.vertex_ids = vertex;
            m.env.instance_ids = instance;
            preload.insert(59, std::array::from_fn(|l| 8 * l as u32));
            preload.insert(60, vertex);
            preload.insert(61, instance);
            preload.insert(62, draw);
            for a in &meta.attributes {
                let reg = parse_reg(&a.register)?;
                if a.format != "f32" && a.format != "auto" {
                    return meta_err(format!("attribute {}: format `{}` is not f32 or auto", a.index, a.format));
                }
                let data = AttributeData { format: a.format.clone(), values: inputs.register(reg) };
                if m.env.attributes.insert(a.index, data).is_some() {
                    return meta_err(format!("attribute index {} is listed twice", a.index));
                }
            }
        }
        Stage::Fragment => {
            let position = sv("POSITION")?;
            let face = sv("FACE")?;
            let pcoord = match system_value(meta, "PCOORD")? {
                Some(r) => Some(inputs.register(r)),
                None => match meta.varyings.iter().find(|v| semantic_name(&v.semantic) == "PCOORD") {
                    Some(v) => Some(inputs.register(parse_reg(&v.register)?)),
                    None => None,
                },
            };
            let sample_id = sv("SAMPLEID")?;
            let sample_mask = sv("SAMPLEMASK")?;
            let layer = sv("LAYER")?;
            let mut r58 = [0; LANES];
            let mut r59 = [0; LANES];
            let mut r61 = [0; LANES];
            let mut r62 = [0; LANES];
            for lane in 0..LANES {
                r58[lane] = face.map_or(0, |f| u32::from(f32::from_bits(f[lane][0]) < 0.0));
                let (x, y) = match position {
                    Some(p) => (pixel(p[lane][0]), pixel(p[lane][1])),
                    None => ((lane & 1) as u32, (lane >> 1) as u32),
                };
                r59[lane] = x | y << 16;
                let mask = sample_mask.map_or(1, |s| s[lane][0] & 0xFFFF);
                let id = sample_id.map_or(0, |s| s[lane][0] & 0x1F);
                r61[lane] = mask | id << 16;
                r62[lane] = layer.map_or(0, |l| l[lane][0] & 0xFF);
                let (z, w) = match position {
                    Some(p) => (p[lane][2], p[lane][3]),
                    None => (0, 1.0f32.to_bits()),
                };
                let (px, py) = pcoord.map_or((0, 0), |c| (c[lane][0], c[lane][1]));
                m.env.var_specials[lane] = [px, py, w, z];
            }
            preload.insert(58, r58);
            preload.insert(59, r59);
            preload.insert(60, [1; LANES]);
            preload.insert(61, r61);
            preload.insert(62, r62);
            for o in meta.outputs.iter().filter(|o| o.kind == "color") {
                let (Some(rt), Ok(reg)) = (o.rt, parse_reg(&o.register)) else {
                    return meta_err(format!("colour output {} needs a render target and a register", o.register));
                };
                let colour = std::array::from_fn(|l| crate::exec::framebuffer::colour(inputs, reg, rt, l));
                m.env.framebuffer.insert(rt, colour);
            }
            for v in &meta.varyings {
                if v.offset % 16 != 0 {
                    return meta_err(format!("varying {} has offset {}, not a multiple of 16", v.register, v.offset));
                }
                let flat = match v.interpolation.as_str() {
                    "flat" => true,
                    "perspective" | "linear" => false,
                    other => return meta_err(format!("unknown interpolation `{other}`")),
                };
                let location = match v.location.as_str() {
                    "center" => 0,
                    "centroid" => 1,
                    "sample" => 2,
                    other => return meta_err(format!("unknown interpolation location `{other}`")),
                };
                let values = inputs.register(parse_reg(&v.register)?);
                if m.env.varyings.iter().any(|x| x.offset == v.offset) {
                    return meta_err(format!("two varyings at offset {}", v.offset));
                }
                m.env.varyings.push(VaryingData { offset: v.offset, flat, location, values });
            }
        }
        Stage::Compute => {
            let tid = sv("THREAD_ID")?.unwrap_or_default();
            let bid = block_ids.unwrap_or_default();
            let mut regs = [[0u32; LANES]; 8];
            for lane in 0..LANES {
                let t = tid[lane];
                let b = bid[lane];
                regs[0][lane] = (t[0] & 0xFFFF) | t[1] << 16;
                regs[1][lane] = t[2] & 0xFFFF;
                for c in 0..3 {
                    regs[2 + c][lane] = b[c];
                    regs[5 + c][lane] = b[c].wrapping_mul(block_size[c]).wrapping_add(t[c]);
                }
            }
            for (i, values) in regs.iter().enumerate() {
                preload.insert(55 + i as u8, *values);
            }
        }
    }
    for &r in &variant.preload {
        if !(48..64).contains(&r) {
            return meta_err(format!("r{r} cannot be preloaded (only r48–r63)"));
        }
        let Some(values) = preload.get(&r) else {
            return meta_err(format!("r{r} has no preloaded value in a {} shader", meta.stage));
        };
        m.set_reg_lanes(usize::from(r), *values);
    }
    Ok(m)
}

/// Integer pixel coordinate of a float position component.
fn pixel(bits: u32) -> u32 {
    let f = f32::from_bits(bits).floor();
    if f.is_nan() { 0 } else { f.clamp(0.0, 65535.0) as u32 }
}

fn sysval(
    meta: &Metadata,
    inputs: &Inputs,
    m: &Machine,
    name: &str,
    component: u32,
    block_size: [u32; 3],
) -> Result<u32, EmuError> {
    let c = component as usize;
    if c >= 4 {
        return meta_err(format!("sysval `{name}`: component {component} is not 0–3"));
    }
    let from_sv = |semantic: &str, default: u32| -> Result<u32, EmuError> {
        Ok(system_value(meta, semantic)?.map_or(default, |r| inputs.register(r)[0][c]))
    };
    Ok(match name {
        "viewport_scale" => 1.0f32.to_bits(),
        "viewport_offset" => 0,
        "num_workgroups" => from_sv("GRID_SIZE", 1)?,
        "workgroup_size" => *block_size.get(c).unwrap_or(&1),
        "first_vertex" => from_sv("BASEVERTEX", 0)?,
        "base_instance" => from_sv("BASEINSTANCE", 0)?,
        "draw_id" => from_sv("DRAWID", 0)?,
        _ => {
            if let Some(rt) = name.strip_prefix("rt_conversion.") {
                match rt.parse::<u32>() {
                    Ok(rt) if rt < 8 => super::fragment::RT_CONVERSION_TAG | rt,
                    _ => return meta_err(format!("bad sysval `{name}` (render targets are 0–7)")),
                }
            } else if let Some(unit) = name.strip_prefix("texture_size.") {
                let unit: u32 =
                    unit.parse().map_err(|_| EmuError::new(ErrorKind::Metadata, format!("bad sysval `{name}`")))?;
                let t = m.env.textures.get(&unit).ok_or_else(|| {
                    EmuError::new(
                        ErrorKind::Metadata,
                        format!("sysval `{name}` names texture unit {unit}, which is not bound"),
                    )
                })?;
                t.query_size(0)[c]
            } else if let Some(unit) = name.strip_prefix("texture_samples.") {
                let unit: u32 =
                    unit.parse().map_err(|_| EmuError::new(ErrorKind::Metadata, format!("bad sysval `{name}`")))?;
                let t = m.env.textures.get(&unit).ok_or_else(|| {
                    EmuError::new(ErrorKind::Metadata, format!("sysval `{name}` names unbound texture unit {unit}"))
                })?;
                if c == 0 { t.samples } else { 0 }
            } else if let Some(index) = name.strip_prefix("buffer_address.") {
                let index: u32 =
                    index.parse().map_err(|_| EmuError::new(ErrorKind::Metadata, format!("bad sysval `{name}`")))?;
                // A store through the address of an unbound buffer faults there.
                let address = ssbo_address(index);
                match c {
                    0 => address as u32,
                    1 => (address >> 32) as u32,
                    _ => 0,
                }
            } else if let Some(index) = name.strip_prefix("buffer_size.") {
                let index: u32 =
                    index.parse().map_err(|_| EmuError::new(ErrorKind::Metadata, format!("bad sysval `{name}`")))?;
                // The bytes of BUFFER[index] as mapped (an unbound buffer is empty).
                let bytes = inputs.buffers.get(&index).map_or(0, |words| words.len() * 4);
                let bytes = u32::try_from(bytes)
                    .map_err(|_| EmuError::new(ErrorKind::Inputs, format!("buffer {index} is larger than 4 GiB")))?;
                if c == 0 { bytes } else { 0 }
            } else if let Some(unit) = name.strip_prefix("image_size.") {
                let unit: u32 =
                    unit.parse().map_err(|_| EmuError::new(ErrorKind::Metadata, format!("bad sysval `{name}`")))?;
                let image = m.memory.images.get(&unit).ok_or_else(|| {
                    EmuError::new(
                        ErrorKind::Metadata,
                        format!("sysval `{name}` names image {unit}, which is not bound"),
                    )
                })?;
                image.query_size()[c]
            } else {
                return meta_err(format!("unknown sysval `{name}`"));
            }
        }
    })
}

fn fragment_outputs(meta: &Metadata, m: &Machine, outputs: &mut Outputs) -> Result<(), EmuError> {
    for o in &meta.outputs {
        let reg = parse_reg(&o.register)?;
        let entry = outputs.outputs.entry(reg).or_insert([[0; 4]; LANES]);
        for lane in 0..LANES {
            if m.discarded[lane] {
                continue;
            }
            match o.kind.as_str() {
                "color" => {
                    let rt = o.rt.ok_or_else(|| {
                        EmuError::new(ErrorKind::Metadata, format!("colour output {} without rt", o.register))
                    })?;
                    if let Some(c) = m.capture.colour.get(&rt).and_then(|l| l[lane]) {
                        entry[lane] = c;
                    }
                }
                "depth" => entry[lane][2] = m.capture.depth[lane].unwrap_or(0),
                "stencil" => entry[lane][1] = m.capture.stencil[lane].unwrap_or(0),
                "sample_mask" => entry[lane][0] = m.capture.coverage[lane].unwrap_or(0),
                other => return meta_err(format!("fragment output kind `{other}`")),
            }
        }
    }
    Ok(())
}

fn vertex_outputs(
    meta: &Metadata,
    position: &Machine,
    varying: Option<&Machine>,
    no_psiz: Option<&Machine>,
    outputs: &mut Outputs,
) -> Result<(), EmuError> {
    let fault = |message: String| Err(EmuError::new(ErrorKind::Fault, message));
    if !position.memory.idvs[Stream::Varying as usize].is_empty() {
        return fault("the position variant stores varyings (.estream)".into());
    }
    if let Some(v) = varying {
        if !v.memory.idvs[Stream::Position as usize].is_empty() {
            return fault("the varying variant stores position data (.istream)".into());
        }
    }
    if let Some(n) = no_psiz {
        for lane in 0..LANES {
            let record = idvs_record(8 * lane as u64);
            if n.memory.idvs_bytes(Stream::Position, record, 16)
                != position.memory.idvs_bytes(Stream::Position, record, 16)
            {
                return fault(format!("variant position_no_psiz stores a different position for lane {lane}"));
            }
            if n.memory.idvs_written(Stream::Position, idvs_record(8 * lane as u64 + 4), 2) {
                return fault(format!("variant position_no_psiz stores a point size (lane {lane})"));
            }
        }
    }
    let word_at = |m: &Machine, stream: Stream, addr: u64| -> [u32; 4] {
        let w = bytes_to_words(&m.memory.idvs_bytes(stream, addr, 16));
        [w[0], w[1], w[2], w[3]]
    };
    for o in &meta.outputs {
        let reg = parse_reg(&o.register)?;
        let mut lanes = [[0u32; 4]; LANES];
        for (lane, value) in lanes.iter_mut().enumerate() {
            let record = idvs_record(8 * lane as u64);
            let extended = idvs_record(8 * lane as u64 + 4);
            match o.kind.as_str() {
                "position" => *value = word_at(position, Stream::Position, record),
                "point_size" => {
                    let b = position.memory.idvs_bytes(Stream::Position, extended, 2);
                    value[0] = fp::f16_to_f32_exact(u32::from(u16::from_le_bytes([b[0], b[1]])));
                }
                "layer" => value[0] = u32::from(position.memory.idvs_bytes(Stream::Position, extended + 2, 1)[0]),
                other => return meta_err(format!("vertex output kind `{other}`")),
            }
        }
        outputs.outputs.insert(reg, lanes);
    }
    for v in &meta.varyings {
        let reg = parse_reg(&v.register)?;
        let Some(m) = varying else {
            return meta_err(format!("varying {} is listed but there is no `varying` variant", v.register));
        };
        let lanes: Lanes =
            std::array::from_fn(|lane| word_at(m, Stream::Varying, idvs_record(8 * lane as u64) + u64::from(v.offset)));
        outputs.outputs.insert(reg, lanes);
    }
    Ok(())
}
