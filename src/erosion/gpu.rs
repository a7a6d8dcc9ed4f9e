//! Driver of glsl/droplet.comp: uploads the fixed-point heightfield, dispatches the
//! droplets in batches with compute-to-compute barriers between them, and reads back.

use std::sync::Arc;
use std::time::Duration;

use super::batches::{plan_batches, plan_phased, Batch};
use super::contention::{AtomicCounts, Contention, MassInputs};
use super::params::{AtomicMode, DropletJob};
use super::variant::{DropletShader, KernelVariant, Lever};
use super::{ErosionError, WorkCount};
use crate::gpu::{
    shaders, Buffer, BufferKind, CommandStream, CompilerStatistic, ComputePipeline, Context,
    DescriptorSet, Hazard, PipelineDesc, SpecConstant, SpecValue, Spirv, TexelFormat, TexelKind,
    TexelView, TimestampQueries,
};

/// The push-constant block of glsl/include/droplet_bindings.glsl, member for member.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct DropletPushConstants {
    map_width: i32,
    map_height: i32,
    max_lifetime: i32,
    inertia: f32,
    capacity_factor: f32,
    erosion_rate: f32,
    deposition_rate: f32,
    evaporation_rate: f32,
    seed: u32,
    batch_base_id: u32,
    batch_size: u32,
    tile_size: u32,
    tile_order: u32,
    phase_stride: u32,
    phase: u32,
    group_base: u32,
    pass: u32,
    pass_count: u32,
    steps_per_pass: u32,
    stagger: u32,
    colour_groups: u32,
}

/// The push-constant block of glsl/apply_delta.comp.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct ApplyPushConstants {
    cells: u32,
}
const APPLY_WORKGROUP: u32 = 256;
/// Bytes of one `DropletState` in glsl/include/droplet_bindings.glsl.
const DROPLET_STATE_BYTES: u64 = 32;

/// SSBO bindings of the droplet kernel: heightData, the six of the instrumented and
/// stateful builds, and the heightfield again for the readonly and quad loads. A texel
/// view of it follows where a lever asks for one (`texel_binding`).
const STORAGE_BINDINGS: u32 = 8;

/// Specialization constant IDs of the droplet kernel.
const WORKGROUP_SIZE_ID: u32 = 1;
const FIXED_POINT_SCALE_ID: u32 = 2;
const RESERVED_SHARED_WORDS_ID: u32 = 3;
/// Slots of the `workCounters` SSBO: droplets, then 64 shards each of atomics, of
/// same-cell conflicts inside a subgroup, and of adds of zero.
const COUNTER_SHARDS: usize = 64;
const COUNTER_SLOTS: u64 = 1 + 3 * COUNTER_SHARDS as u64;

/// A fixed-point heightfield: `int(h * scale)` per cell, row-major.
#[derive(Clone, Debug)]
pub struct FixedHeightfield<'a> {
    pub width: u32,
    pub height: u32,
    pub cells: &'a [i32],
}

impl<'a> FixedHeightfield<'a> {
    pub fn new(width: u32, height: u32, cells: &'a [i32]) -> Self {
        Self {
            width,
            height,
            cells,
        }
    }
}

/// What one run on the GPU produced.
#[derive(Clone, Debug)]
pub struct GpuRun {
    /// The heights after the run; empty unless the run read them back.
    pub cells: Vec<i32>,
    /// Time between GPU timestamps around the dispatches; `None` where the device has
    /// no timestamps.
    pub gpu_time: Option<Duration>,
    /// Host time from submission to completion, upload and read-back included.
    pub wall_time: Duration,
    pub batches: Vec<Batch>,
    /// Droplet dispatches: batches times passes.
    pub dispatches: usize,
    /// Filled by the instrumented build only.
    pub work: Option<WorkCount>,
    pub contention: Option<Contention>,
}

pub struct DropletKernel {
    ctx: Arc<Context>,
    timed: ComputePipeline,
    counted: ComputePipeline,
    /// Deterministic mode's glsl/apply_delta.comp.
    apply: Option<ComputePipeline>,
    workgroup: u32,
    variant: KernelVariant,
    scale: f32,
}

impl DropletKernel {
    /// Builds the timed and instrumented pipelines of this variant for this workgroup
    /// size and scale.
    pub fn new(
        ctx: &Arc<Context>,
        workgroup: u32,
        fixed_point_scale: f32,
        variant: KernelVariant,
    ) -> Result<Self, ErosionError> {
        let limit = ctx.info().max_workgroup_x();
        if workgroup == 0 || workgroup > limit {
            return Err(ErosionError::Workgroup {
                requested: workgroup,
                limit,
            });
        }
        if let Some(reason) = variant.unsupported() {
            return Err(ErosionError::Variant(reason));
        }
        let shared_limit = ctx.info().max_shared_memory_bytes;
        if variant.reserved_shared_bytes > shared_limit {
            return Err(ErosionError::Variant(format!(
                "{} bytes of reserved shared memory are above this device's limit of {shared_limit}",
                variant.reserved_shared_bytes
            )));
        }
        if variant.atomics == AtomicMode::Float && !ctx.info().float_atomic_add {
            return Err(ErosionError::Unsupported(
                "float atomics (shaderBufferFloat32AtomicAdd of VK_EXT_shader_atomic_float)",
            ));
        }
        let spec = [
            SpecConstant {
                id: WORKGROUP_SIZE_ID,
                value: SpecValue::U32(workgroup),
            },
            SpecConstant {
                id: FIXED_POINT_SCALE_ID,
                value: SpecValue::F32(fixed_point_scale),
            },
            SpecConstant {
                id: RESERVED_SHARED_WORDS_ID,
                value: SpecValue::U32((variant.reserved_shared_bytes / 4).max(1)),
            },
        ];
        let build = |shader: Spirv| {
            ComputePipeline::new(
                ctx,
                &PipelineDesc {
                    texel_buffers: texel_binding(variant.lever).as_slice(),
                    robustness_off: variant.lever == Lever::RobustnessOff,
                    ..PipelineDesc::storage(
                        shader,
                        &spec,
                        STORAGE_BINDINGS,
                        std::mem::size_of::<DropletPushConstants>() as u32,
                    )
                },
            )
        };
        let module = |counted| {
            variant.module(counted).ok_or_else(|| {
                ErosionError::Variant(format!("{} has no compiled module", variant.module_name()))
            })
        };
        let apply = if variant.atomics == AtomicMode::Deterministic {
            Some(ComputePipeline::new(
                ctx,
                &PipelineDesc::storage(
                    shaders::APPLY_DELTA,
                    &[],
                    2,
                    std::mem::size_of::<ApplyPushConstants>() as u32,
                ),
            )?)
        } else {
            None
        };
        Ok(Self {
            ctx: Arc::clone(ctx),
            timed: build(module(false)?)?,
            counted: build(module(true)?)?,
            apply,
            workgroup,
            variant,
            scale: fixed_point_scale,
        })
    }

    pub fn workgroup(&self) -> u32 {
        self.workgroup
    }

    pub fn variant(&self) -> KernelVariant {
        self.variant
    }

    /// The driver's compiler statistics of the timed pipeline; empty where the device
    /// does not report them.
    pub fn statistics(&self) -> &[CompilerStatistic] {
        self.timed.statistics()
    }

    /// Runs the job once with the uninstrumented kernel, timed with GPU timestamps.
    pub fn run(
        &self,
        map: &FixedHeightfield,
        job: &DropletJob,
        batch: u32,
    ) -> Result<GpuRun, ErosionError> {
        self.prepare(map)?.execute(job, batch, RunMode::TIMED)
    }

    /// Runs the job once with the instrumented kernel, which counts droplets, atomics
    /// and contention.
    pub fn run_counted(
        &self,
        map: &FixedHeightfield,
        job: &DropletJob,
        batch: u32,
    ) -> Result<GpuRun, ErosionError> {
        self.prepare(map)?.execute(job, batch, RunMode::COUNTED)
    }

    /// Buffers and commands for one map, to run many times: each run starts from a
    /// fresh copy of `map`.
    pub fn prepare(&self, map: &FixedHeightfield) -> Result<DropletRunner<'_>, ErosionError> {
        check_map(map)?;
        let ctx = &self.ctx;
        let bytes = map.cells.len() as u64 * 4;
        let upload = if self.variant.atomics == AtomicMode::Float {
            let heights: Vec<f32> = map.cells.iter().map(|&c| c as f32 / self.scale).collect();
            Buffer::upload_from(ctx, "heightData upload", &heights)?
        } else {
            Buffer::upload_from(ctx, "heightData upload", map.cells)?
        };
        // Buffers a variant does not use are still bound, at a token size.
        let unused = 16;
        let delta_bytes = if self.apply.is_some() { bytes } else { unused };
        Ok(DropletRunner {
            kernel: self,
            width: map.width,
            height: map.height,
            initial_sum: map.cells.iter().map(|&c| i64::from(c)).sum(),
            // Whole 16-byte quads, for the quad loads.
            heights: Buffer::new(
                ctx,
                "heightData",
                bytes.next_multiple_of(16),
                BufferKind::Storage,
            )?,
            counters: Buffer::new(ctx, "workCounters", COUNTER_SLOTS * 4, BufferKind::Storage)?,
            hits: Buffer::new(ctx, "cellHits", bytes, BufferKind::Storage)?,
            delta: Buffer::new(ctx, "deltaData", delta_bytes, BufferKind::Storage)?,
            states: Buffer::new(ctx, "dropletState", unused, BufferKind::Storage)?,
            per_droplet: None,
            upload,
            readback: Buffer::new(ctx, "heightData read-back", bytes, BufferKind::Download)?,
            counter_readback: Buffer::new(
                ctx,
                "workCounters read-back",
                COUNTER_SLOTS * 4,
                BufferKind::Download,
            )?,
            hits_readback: Buffer::new(ctx, "cellHits read-back", bytes, BufferKind::Download)?,
            queries: TimestampQueries::new(ctx, 2)?,
            stream: CommandStream::new(ctx)?,
        })
    }
}

/// Which kernel a run uses and whether it reads the heights back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunMode {
    pub counted: bool,
    pub read_back: bool,
}

impl RunMode {
    pub const TIMED: RunMode = RunMode {
        counted: false,
        read_back: true,
    };
    pub const COUNTED: RunMode = RunMode {
        counted: true,
        read_back: true,
    };
    /// For repetitions of a benchmark: no read-back.
    pub const TIMED_ONLY: RunMode = RunMode {
        counted: false,
        read_back: false,
    };
}

/// Per-droplet instrumentation buffers, with their read-backs.
struct PerDroplet {
    droplets: u32,
    intended: Buffer,
    applied: Buffer,
    intended_readback: Buffer,
    applied_readback: Buffer,
}

impl PerDroplet {
    fn new(ctx: &Arc<Context>, droplets: u32) -> Result<Self, ErosionError> {
        let bytes = u64::from(droplets) * 4;
        Ok(Self {
            droplets,
            intended: Buffer::new(ctx, "intendedChange", bytes, BufferKind::Storage)?,
            applied: Buffer::new(ctx, "appliedFixed", bytes, BufferKind::Storage)?,
            intended_readback: Buffer::new(
                ctx,
                "intendedChange read-back",
                bytes,
                BufferKind::Download,
            )?,
            applied_readback: Buffer::new(
                ctx,
                "appliedFixed read-back",
                bytes,
                BufferKind::Download,
            )?,
        })
    }
}

/// A map's buffers on the device, ready to run droplet jobs on.
pub struct DropletRunner<'k> {
    kernel: &'k DropletKernel,
    /// First, so that it drops first: its drop waits for the device before the
    /// buffers below are freed.
    stream: CommandStream,
    width: u32,
    height: u32,
    /// Sum of the initial fixed-point cells, for the mass the map received.
    initial_sum: i64,
    heights: Buffer,
    counters: Buffer,
    hits: Buffer,
    delta: Buffer,
    states: Buffer,
    per_droplet: Option<PerDroplet>,
    upload: Buffer,
    readback: Buffer,
    counter_readback: Buffer,
    hits_readback: Buffer,
    queries: Option<TimestampQueries>,
}

impl DropletRunner<'_> {
    pub fn execute(
        &mut self,
        job: &DropletJob,
        batch: u32,
        mode: RunMode,
    ) -> Result<GpuRun, ErosionError> {
        job.validate()?;
        job.spawn.check_map(self.width, self.height)?;
        if batch == 0 {
            return Err(ErosionError::Batch);
        }
        let kernel = self.kernel;
        if !kernel.variant.runs(job) {
            return Err(ErosionError::VariantMismatch {
                needed: KernelVariant::for_job(job, kernel.variant.atomics).module_name(),
                built: kernel.variant.module_name(),
            });
        }
        let whole = plan_batches(
            job.droplets,
            batch,
            kernel.workgroup,
            kernel.ctx.info().max_workgroup_count[0],
        );
        let batches = plan_phased(&whole, job.spawn.phases, kernel.workgroup);
        self.reserve(job, &batches)?;
        let mut colour_groups = [0u32; 9];
        for b in &batches {
            colour_groups[b.phase as usize] += b.groups;
        }
        let per_droplet = self.per_droplet.as_ref().expect("reserved above");
        let pipeline = if mode.counted {
            &kernel.counted
        } else {
            &kernel.timed
        };
        let cells = self.width * self.height;
        let texels = texel_binding(kernel.variant.lever)
            .map(|kind| TexelView::new(&self.heights, u64::from(cells), TexelFormat::I32, kind))
            .transpose()?;
        let set = DescriptorSet::with_texels(
            pipeline,
            &[
                &self.heights,
                &self.counters,
                &self.hits,
                &per_droplet.intended,
                &per_droplet.applied,
                &self.delta,
                &self.states,
                &self.heights,
            ],
            &texels.iter().collect::<Vec<_>>(),
        )?;
        let apply = match &kernel.apply {
            Some(apply) => Some((
                apply,
                DescriptorSet::new(apply, &[&self.heights, &self.delta])?,
            )),
            None => None,
        };
        let apply_push = ApplyPushConstants { cells };
        let apply_groups = cells
            .div_ceil(APPLY_WORKGROUP)
            .min(kernel.ctx.info().max_workgroup_count[0]);
        let spawn = job.spawn.constants();
        let p = &job.params;
        let passes = if kernel.variant.shader == DropletShader::Passes {
            job.passes.dispatches()
        } else {
            1
        };
        let push = |b: &Batch, pass: u32| DropletPushConstants {
            map_width: self.width as i32,
            map_height: self.height as i32,
            max_lifetime: p.lifetime as i32,
            inertia: p.inertia,
            capacity_factor: p.capacity,
            erosion_rate: p.erosion,
            deposition_rate: p.deposition,
            evaporation_rate: p.evaporation,
            seed: job.seed,
            batch_base_id: b.base_id,
            batch_size: b.size,
            tile_size: spawn.tile_size,
            tile_order: spawn.tile_order,
            phase_stride: spawn.phase_stride,
            phase: b.phase,
            group_base: b.group_base,
            pass,
            pass_count: job.passes.count,
            steps_per_pass: job.passes.steps_per_pass(p.lifetime),
            stagger: u32::from(job.passes.stagger),
            colour_groups: colour_groups[b.phase as usize],
        };
        let (heights, counters, hits, delta, queries) = (
            &self.heights,
            &self.counters,
            &self.hits,
            &self.delta,
            &self.queries,
        );
        let (upload, readback) = (&self.upload, &self.readback);
        let (counter_readback, hits_readback) = (&self.counter_readback, &self.hits_readback);
        let wall_time = self.stream.submit(|rec| {
            if let Some(q) = queries {
                rec.reset_queries(q);
            }
            rec.barrier(Hazard::EarlierWorkToTransfer);
            rec.copy(upload, heights);
            if apply.is_some() {
                rec.fill_zero(delta);
            }
            if mode.counted {
                for buffer in [counters, hits, &per_droplet.intended, &per_droplet.applied] {
                    rec.fill_zero(buffer);
                }
            }
            rec.barrier(Hazard::TransferToCompute);
            if let Some(q) = queries {
                rec.timestamp(q, 0);
            }
            let mut first = true;
            for b in &batches {
                for pass in 0..passes {
                    if !first {
                        rec.barrier(Hazard::ComputeToCompute);
                    }
                    first = false;
                    rec.bind(pipeline, &set);
                    rec.push_constants(&push(b, pass));
                    rec.dispatch(b.groups, 1, 1);
                    if let Some((apply, apply_set)) = &apply {
                        rec.barrier(Hazard::ComputeToCompute);
                        rec.bind(apply, apply_set);
                        rec.push_constants(&apply_push);
                        rec.dispatch(apply_groups, 1, 1);
                    }
                }
            }
            if let Some(q) = queries {
                rec.timestamp(q, 1);
            }
            if mode.read_back || mode.counted {
                rec.barrier(Hazard::ComputeToTransfer);
                if mode.read_back {
                    rec.copy(heights, readback);
                }
                if mode.counted {
                    rec.copy(counters, counter_readback);
                    rec.copy(hits, hits_readback);
                    rec.copy(&per_droplet.intended, &per_droplet.intended_readback);
                    rec.copy(&per_droplet.applied, &per_droplet.applied_readback);
                }
                rec.barrier(Hazard::TransferToHost);
            }
        })?;

        let gpu_time = match queries {
            Some(q) => Some(q.elapsed(0, 1)?),
            None => None,
        };
        let (cells, received) = if mode.read_back {
            self.read_heights()?
        } else {
            (Vec::new(), 0.0)
        };
        let (work, contention) = if mode.counted {
            let (work, contention) = self.read_counts(job.droplets as usize, received)?;
            (Some(work), Some(contention))
        } else {
            (None, None)
        };
        Ok(GpuRun {
            cells,
            gpu_time,
            wall_time,
            dispatches: batches.len() * passes as usize,
            batches,
            work,
            contention,
        })
    }
}

impl DropletRunner<'_> {
    /// The heights after a run, in fixed point, and the height it added to the map.
    fn read_heights(&self) -> Result<(Vec<i32>, f64), ErosionError> {
        let scale = self.kernel.scale;
        if self.kernel.variant.atomics == AtomicMode::Float {
            let heights = self.readback.read::<f32>()?;
            let sum: f64 = heights.iter().map(|&h| f64::from(h)).sum();
            let cells = heights
                .iter()
                .map(|&h| (h * scale).round() as i32)
                .collect();
            Ok((cells, sum - self.initial_sum as f64 / f64::from(scale)))
        } else {
            let cells = self.readback.read::<i32>()?;
            let sum: i64 = cells.iter().map(|&c| i64::from(c)).sum();
            Ok((cells, (sum - self.initial_sum) as f64 / f64::from(scale)))
        }
    }

    /// What the instrumented build counted, given the height the map received.
    fn read_counts(
        &self,
        droplets: usize,
        received: f64,
    ) -> Result<(WorkCount, Contention), ErosionError> {
        let per_droplet = self.per_droplet.as_ref().expect("reserved before the run");
        let slots = self.counter_readback.read::<u32>()?;
        let shards = |k: usize| {
            slots[1 + k * COUNTER_SHARDS..1 + (k + 1) * COUNTER_SHARDS]
                .iter()
                .map(|&c| u64::from(c))
                .sum::<u64>()
        };
        let counts = AtomicCounts {
            atomics: shards(0),
            conflicts: shards(1),
            zero_adds: shards(2),
        };
        let intended = per_droplet.intended_readback.read::<f32>()?;
        let applied = per_droplet.applied_readback.read::<i32>()?;
        let contention = Contention::measure(
            &self.hits_readback.read::<u32>()?,
            counts,
            &MassInputs {
                intended: &intended[..droplets],
                applied_fixed: &applied[..droplets],
                float_heights: self.kernel.variant.atomics == AtomicMode::Float,
                scale: self.kernel.scale,
                received,
            },
        );
        let work = WorkCount::from_atomics(u64::from(slots[0]), counts.atomics);
        Ok((work, contention))
    }

    /// Grows the per-droplet buffers to the job's droplets and, for passes, the state
    /// buffer to its largest dispatch.
    fn reserve(&mut self, job: &DropletJob, batches: &[Batch]) -> Result<(), ErosionError> {
        let ctx = &self.kernel.ctx;
        if self
            .per_droplet
            .as_ref()
            .is_none_or(|p| p.droplets < job.droplets)
        {
            self.per_droplet = Some(PerDroplet::new(ctx, job.droplets)?);
        }
        if self.kernel.variant.shader == DropletShader::Passes {
            let largest = batches.iter().map(|b| u64::from(b.size)).max().unwrap_or(1);
            let bytes = largest * DROPLET_STATE_BYTES;
            if self.states.size() < bytes {
                self.states = Buffer::new(ctx, "dropletState", bytes, BufferKind::Storage)?;
            }
        }
        Ok(())
    }
}

/// The texel view of the heightfield a lever binds after the SSBOs, if any.
fn texel_binding(lever: Lever) -> Option<TexelKind> {
    match lever {
        Lever::Texel => Some(TexelKind::Uniform),
        Lever::ImageAtomics | Lever::Image => Some(TexelKind::Storage),
        _ => None,
    }
}

fn check_map(map: &FixedHeightfield) -> Result<(), ErosionError> {
    let min = crate::terrain::MIN_SIZE;
    if map.width < min || map.height < min {
        return Err(ErosionError::MapTooSmall {
            width: map.width,
            height: map.height,
        });
    }
    let cells = u64::from(map.width) * u64::from(map.height);
    if map.cells.len() as u64 != cells || cells > i32::MAX as u64 {
        return Err(ErosionError::MapShape {
            width: map.width,
            height: map.height,
            cells: map.cells.len(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::push_constant_members;
    use std::mem::offset_of;

    /// Each GLSL member of `DropletParams` and the offset of its Rust field: a test holds
    /// them to the offsets in every droplet module's SPIR-V.
    const DROPLET_PUSH_LAYOUT: [(&str, usize); 21] = [
        ("MAP_WIDTH", offset_of!(DropletPushConstants, map_width)),
        ("MAP_HEIGHT", offset_of!(DropletPushConstants, map_height)),
        (
            "MAX_LIFETIME",
            offset_of!(DropletPushConstants, max_lifetime),
        ),
        ("INERTIA", offset_of!(DropletPushConstants, inertia)),
        (
            "CAPACITY_FACTOR",
            offset_of!(DropletPushConstants, capacity_factor),
        ),
        (
            "EROSION_RATE",
            offset_of!(DropletPushConstants, erosion_rate),
        ),
        (
            "DEPOSITION_RATE",
            offset_of!(DropletPushConstants, deposition_rate),
        ),
        (
            "EVAPORATION_RATE",
            offset_of!(DropletPushConstants, evaporation_rate),
        ),
        ("SEED", offset_of!(DropletPushConstants, seed)),
        (
            "BATCH_BASE_ID",
            offset_of!(DropletPushConstants, batch_base_id),
        ),
        ("BATCH_SIZE", offset_of!(DropletPushConstants, batch_size)),
        ("TILE_SIZE", offset_of!(DropletPushConstants, tile_size)),
        ("TILE_ORDER", offset_of!(DropletPushConstants, tile_order)),
        (
            "PHASE_STRIDE",
            offset_of!(DropletPushConstants, phase_stride),
        ),
        ("PHASE", offset_of!(DropletPushConstants, phase)),
        ("GROUP_BASE", offset_of!(DropletPushConstants, group_base)),
        ("PASS", offset_of!(DropletPushConstants, pass)),
        ("PASS_COUNT", offset_of!(DropletPushConstants, pass_count)),
        (
            "STEPS_PER_PASS",
            offset_of!(DropletPushConstants, steps_per_pass),
        ),
        ("STAGGER", offset_of!(DropletPushConstants, stagger)),
        (
            "COLOUR_GROUPS",
            offset_of!(DropletPushConstants, colour_groups),
        ),
    ];

    const APPLY_PUSH_LAYOUT: [(&str, usize); 1] =
        [("CELLS", offset_of!(ApplyPushConstants, cells))];

    /// The module's push-constant members, with the Rust layout's names and offsets,
    /// and the block's size against the Rust struct's.
    fn assert_push_layout(spirv: Spirv, layout: &[(&str, usize)], rust_size: usize) {
        let members = push_constant_members(spirv).expect("a push-constant block");
        let expected: Vec<(String, u32)> = layout
            .iter()
            .map(|(name, offset)| (name.to_string(), *offset as u32))
            .collect();
        assert_eq!(members, expected, "{}", spirv.name);
        let (_, last) = layout.last().expect("members");
        assert_eq!(
            last + 4,
            rust_size,
            "{}: no padding after the last member",
            spirv.name
        );
    }

    #[test]
    fn push_constant_structs_have_the_offsets_of_their_glsl_blocks() {
        let size = std::mem::size_of::<DropletPushConstants>();
        for module in [
            shaders::DROPLET,
            shaders::DROPLET_PASSES,
            shaders::DROPLET_FAST,
        ] {
            assert_push_layout(module, &DROPLET_PUSH_LAYOUT, size);
        }
        let apply = std::mem::size_of::<ApplyPushConstants>();
        assert_push_layout(shaders::APPLY_DELTA, &APPLY_PUSH_LAYOUT, apply);
    }
}
