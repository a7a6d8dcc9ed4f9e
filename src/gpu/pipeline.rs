//! Compute pipelines with specialization and push constants, and their descriptor sets.

use std::marker::PhantomData;
use std::sync::Arc;

use ash::vk;

use super::buffer::{Buffer, TexelKind, TexelView};
use super::context::Context;
use super::error::{GpuError, GpuResult, VkResultExt};
use super::statistics::{self, CompilerStatistic};

/// An embedded SPIR-V module, as build.rs generates them.
#[derive(Clone, Copy, Debug)]
pub struct Spirv {
    pub name: &'static str,
    pub bytes: &'static [u8],
}

/// The map entries and bytes of 32-bit specialization constants, one word each.
fn specialization_data(constants: &[SpecConstant]) -> (Vec<vk::SpecializationMapEntry>, Vec<u8>) {
    let data = constants
        .iter()
        .flat_map(|c| match c.value {
            SpecValue::U32(v) => v.to_ne_bytes(),
            SpecValue::F32(v) => v.to_ne_bytes(),
        })
        .collect();
    let entries = constants
        .iter()
        .enumerate()
        .map(|(i, c)| {
            vk::SpecializationMapEntry::default()
                .constant_id(c.id)
                .offset(4 * i as u32)
                .size(4)
        })
        .collect();
    (entries, data)
}

/// A module of build.rs's table (`shaders::MODULES`): its SPIR-V, the stem of its
/// source file and the option it was built with on each of the file's axes ("" for
/// the unnamed option).
#[derive(Clone, Copy, Debug)]
pub struct ShaderModule {
    pub spirv: Spirv,
    pub stem: &'static str,
    pub options: &'static [(&'static str, &'static str)],
}

impl ShaderModule {
    /// The module of `stem` built with `options` ((axis, option) pairs; axes not
    /// named take their unnamed option). `None` where the file has no such axis or
    /// option, or no such build.
    pub fn find(modules: &[ShaderModule], stem: &str, options: &[(&str, &str)]) -> Option<Spirv> {
        let wanted = |axis: &str| {
            options
                .iter()
                .find(|(a, _)| *a == axis)
                .map_or("", |(_, option)| *option)
        };
        modules
            .iter()
            .filter(|m| m.stem == stem)
            .filter(|m| {
                options.iter().all(|(axis, option)| {
                    option.is_empty() || m.options.iter().any(|(a, _)| a == axis)
                })
            })
            .find(|m| {
                m.options
                    .iter()
                    .all(|(axis, option)| wanted(axis) == *option)
            })
            .map(|m| m.spirv)
    }
}

/// A 32-bit specialization constant: its `constant_id` and value.
#[derive(Clone, Copy, Debug)]
pub enum SpecValue {
    U32(u32),
    F32(f32),
}

#[derive(Clone, Copy, Debug)]
pub struct SpecConstant {
    pub id: u32,
    pub value: SpecValue,
}

/// What a compute pipeline is built from.
pub struct PipelineDesc<'a> {
    pub shader: Spirv,
    pub specialization: &'a [SpecConstant],
    /// Number of SSBO bindings 0..n in set 0.
    pub storage_buffers: u32,
    /// Texel buffers, bound after the SSBOs (n, n+1, ...), each of its kind.
    pub texel_buffers: &'a [TexelKind],
    /// The whole push-constant block: the buffer addresses, then the parameters.
    pub push_constant_bytes: u32,
    /// Buffers the shader reaches by address: the first `8 * n` bytes of the
    /// push-constant block, set only by `Recorder::bind_addressed`.
    pub addressed_buffers: u32,
    /// Turn robust buffer access off for this pipeline's SSBOs (VK_EXT_pipeline_robustness).
    /// vkerode never enables robustBufferAccess, so this states the default explicitly.
    pub robustness_off: bool,
}

impl<'a> PipelineDesc<'a> {
    /// A pipeline with only SSBOs and push constants, robustness as the device has it.
    pub fn storage(
        shader: Spirv,
        specialization: &'a [SpecConstant],
        storage_buffers: u32,
        push_constant_bytes: u32,
    ) -> Self {
        Self {
            shader,
            specialization,
            storage_buffers,
            texel_buffers: &[],
            push_constant_bytes,
            addressed_buffers: 0,
            robustness_off: false,
        }
    }

    /// A pipeline that reaches `buffers` buffers by their device addresses, which lead
    /// its push-constant block, followed by `params_bytes` of parameters.
    pub fn addressed(
        shader: Spirv,
        specialization: &'a [SpecConstant],
        buffers: u32,
        params_bytes: u32,
    ) -> Self {
        Self {
            addressed_buffers: buffers,
            ..Self::storage(
                shader,
                specialization,
                0,
                ADDRESS_BYTES * buffers + params_bytes,
            )
        }
    }
}

/// Bytes of one buffer address in a push-constant block.
pub(crate) const ADDRESS_BYTES: u32 = 8;

pub struct ComputePipeline {
    ctx: Arc<Context>,
    name: &'static str,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    storage_buffers: u32,
    texel_buffers: Vec<TexelKind>,
    push_constant_bytes: u32,
    addressed_buffers: u32,
    statistics: Vec<CompilerStatistic>,
}

impl ComputePipeline {
    pub fn new(ctx: &Arc<Context>, desc: &PipelineDesc) -> GpuResult<Self> {
        let name = desc.shader.name;
        let code =
            ash::util::read_spv(&mut std::io::Cursor::new(desc.shader.bytes)).map_err(|e| {
                GpuError::Shader {
                    name,
                    message: format!("not valid SPIR-V: {e}"),
                }
            })?;
        // Built up one handle at a time; on error, `partial` frees what exists.
        let mut partial = Self {
            ctx: Arc::clone(ctx),
            name,
            set_layout: vk::DescriptorSetLayout::null(),
            layout: vk::PipelineLayout::null(),
            pipeline: vk::Pipeline::null(),
            storage_buffers: desc.storage_buffers,
            texel_buffers: desc.texel_buffers.to_vec(),
            push_constant_bytes: desc.push_constant_bytes,
            addressed_buffers: desc.addressed_buffers,
            statistics: Vec::new(),
        };
        let push_limit = ctx.info().max_push_constant_bytes;
        if desc.push_constant_bytes > push_limit {
            return Err(GpuError::LimitExceeded {
                what: format!("the push constants of {name}"),
                requested: u64::from(desc.push_constant_bytes),
                limit_name: "maxPushConstantsSize",
                limit: u64::from(push_limit),
            });
        }
        if desc.robustness_off && !ctx.info().pipeline_robustness {
            return Err(GpuError::Shader {
                name,
                message: "robustness off needs VK_EXT_pipeline_robustness, which this device does not offer".into(),
            });
        }

        partial.create_layouts(desc)?;

        let module_info = vk::ShaderModuleCreateInfo::default().code(&code);
        // SAFETY: `code` is whole SPIR-V words, as read_spv checked.
        let module = unsafe { ctx.create_shader_module(&module_info, None) }
            .during("vkCreateShaderModule")?;

        let (entries, data) = specialization_data(desc.specialization);
        let specialization = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(&data);
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main")
            .specialization_info(&specialization);
        let flags = if ctx.info().pipeline_statistics {
            vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR
        } else {
            vk::PipelineCreateFlags::empty()
        };
        let mut robustness = vk::PipelineRobustnessCreateInfoEXT::default()
            .storage_buffers(vk::PipelineRobustnessBufferBehaviorEXT::DISABLED);
        let mut info = vk::ComputePipelineCreateInfo::default()
            .flags(flags)
            .stage(stage)
            .layout(partial.layout);
        if desc.robustness_off {
            info = info.push_next(&mut robustness);
        }
        let info = [info];
        // SAFETY: the module, layout and every chained struct are alive for the call;
        // the context's pipeline cache is internally synchronized (Vulkan 1.0's rule for
        // caches created without EXTERNALLY_SYNCHRONIZED).
        let created = unsafe { ctx.create_compute_pipelines(ctx.pipeline_cache(), &info, None) };
        // SAFETY: a module may be destroyed once pipelines are created from it.
        unsafe { ctx.destroy_shader_module(module, None) };
        partial.pipeline = created
            .map_err(|(_, r)| r)
            .during("vkCreateComputePipelines")?[0];
        partial.statistics = statistics::query(ctx, partial.pipeline)?;
        Ok(partial)
    }

    /// The descriptor set layout (SSBOs, then texel buffers) and the pipeline layout.
    fn create_layouts(&mut self, desc: &PipelineDesc) -> GpuResult<()> {
        let ctx = &self.ctx;
        let types = (0..desc.storage_buffers)
            .map(|_| vk::DescriptorType::STORAGE_BUFFER)
            .chain(desc.texel_buffers.iter().map(|k| k.descriptor_type()));
        let bindings: Vec<_> = types
            .enumerate()
            .map(|(binding, ty)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(binding as u32)
                    .descriptor_type(ty)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let set_info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
        // SAFETY: valid create info on a live device.
        self.set_layout = unsafe { ctx.create_descriptor_set_layout(&set_info, None) }
            .during("vkCreateDescriptorSetLayout")?;

        let set_layouts = [self.set_layout];
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .offset(0)
            .size(desc.push_constant_bytes)];
        let mut layout_info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
        if desc.push_constant_bytes > 0 {
            layout_info = layout_info.push_constant_ranges(&ranges);
        }
        // SAFETY: valid create info; the set layout it names is alive.
        self.layout = unsafe { ctx.create_pipeline_layout(&layout_info, None) }
            .during("vkCreatePipelineLayout")?;
        Ok(())
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// What the driver's compiler reports of this pipeline; empty where the device
    /// does not report statistics (`DeviceInfo::pipeline_statistics`).
    pub fn statistics(&self) -> &[CompilerStatistic] {
        &self.statistics
    }

    pub(crate) fn raw(&self) -> vk::Pipeline {
        self.pipeline
    }

    pub(crate) fn layout(&self) -> vk::PipelineLayout {
        self.layout
    }

    pub(crate) fn set_layout(&self) -> vk::DescriptorSetLayout {
        self.set_layout
    }

    pub(crate) fn push_constant_bytes(&self) -> u32 {
        self.push_constant_bytes
    }

    pub(crate) fn addressed_buffers(&self) -> u32 {
        self.addressed_buffers
    }
}

impl Drop for ComputePipeline {
    fn drop(&mut self) {
        // SAFETY: every submission that used the pipeline has been waited on; null
        // handles (from a failed constructor) are ignored by Vulkan.
        unsafe {
            self.ctx.destroy_pipeline(self.pipeline, None);
            self.ctx.destroy_pipeline_layout(self.layout, None);
            self.ctx
                .destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

/// One descriptor set binding SSBOs 0..n of a pipeline, with a pool of its own. It
/// borrows what it binds, so a buffer cannot be dropped while a set refers to it:
///
/// ```compile_fail,E0505
/// # use vkerode::gpu::*;
/// # fn f(ctx: &std::sync::Arc<Context>, pipeline: &ComputePipeline) -> GpuResult<()> {
/// let buffer = Buffer::new(ctx, "data", 64, BufferKind::Storage)?;
/// let set = DescriptorSet::new(pipeline, &[&buffer])?;
/// drop(buffer);
/// CommandStream::new(ctx)?.submit(|rec| rec.bind(pipeline, &set))?;
/// # Ok(()) }
/// ```
pub struct DescriptorSet<'b> {
    ctx: Arc<Context>,
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
    layout: vk::DescriptorSetLayout,
    _bound: PhantomData<&'b Buffer>,
}

impl<'b> DescriptorSet<'b> {
    pub fn new(pipeline: &'b ComputePipeline, buffers: &[&'b Buffer]) -> GpuResult<Self> {
        Self::with_texels(pipeline, buffers, &[])
    }

    /// Binds `buffers` as the SSBOs and `texels` as the texel buffers after them.
    pub fn with_texels(
        pipeline: &'b ComputePipeline,
        buffers: &[&'b Buffer],
        texels: &[&'b TexelView<'b>],
    ) -> GpuResult<Self> {
        let ctx = &pipeline.ctx;
        let kinds: Vec<TexelKind> = texels.iter().map(|t| t.kind()).collect();
        if buffers.len() != pipeline.storage_buffers as usize || kinds != pipeline.texel_buffers {
            return Err(GpuError::Shader {
                name: pipeline.name,
                message: format!(
                    "expects {} storage buffers and texel buffers {:?}; {} and {kinds:?} were bound",
                    pipeline.storage_buffers,
                    pipeline.texel_buffers,
                    buffers.len(),
                ),
            });
        }
        let mut sizes = vec![vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(pipeline.storage_buffers.max(1))];
        sizes.extend(kinds.iter().map(|k| {
            vk::DescriptorPoolSize::default()
                .ty(k.descriptor_type())
                .descriptor_count(1)
        }));
        let pool_info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(1)
            .pool_sizes(&sizes);
        // SAFETY: valid create info on a live device.
        let pool = unsafe { ctx.create_descriptor_pool(&pool_info, None) }
            .during("vkCreateDescriptorPool")?;
        let mut owned = Self {
            ctx: Arc::clone(ctx),
            pool,
            set: vk::DescriptorSet::null(),
            layout: pipeline.set_layout,
            _bound: PhantomData,
        };
        let layouts = [pipeline.set_layout];
        let alloc = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(pool)
            .set_layouts(&layouts);
        // SAFETY: the pool has room for exactly this set.
        let set =
            unsafe { ctx.allocate_descriptor_sets(&alloc) }.during("vkAllocateDescriptorSets")?[0];
        let infos: Vec<_> = buffers
            .iter()
            .map(|b| {
                [vk::DescriptorBufferInfo::default()
                    .buffer(b.raw())
                    .offset(0)
                    .range(vk::WHOLE_SIZE)]
            })
            .collect();
        let views: Vec<_> = texels.iter().map(|t| [t.raw()]).collect();
        let mut writes: Vec<_> = infos
            .iter()
            .enumerate()
            .map(|(binding, info)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(binding as u32)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(info)
            })
            .collect();
        writes.extend(views.iter().enumerate().map(|(i, view)| {
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(pipeline.storage_buffers + i as u32)
                .descriptor_type(kinds[i].descriptor_type())
                .texel_buffer_view(view)
        }));
        // SAFETY: the set, buffers and views are alive; no submission uses the set yet.
        unsafe { ctx.update_descriptor_sets(&writes, &[]) };
        owned.set = set;
        Ok(owned)
    }

    pub(crate) fn raw(&self) -> vk::DescriptorSet {
        self.set
    }

    pub(crate) fn layout(&self) -> vk::DescriptorSetLayout {
        self.layout
    }
}

impl Drop for DescriptorSet<'_> {
    fn drop(&mut self) {
        // SAFETY: destroying the pool frees its set; no pending submission uses it.
        unsafe { self.ctx.destroy_descriptor_pool(self.pool, None) };
    }
}
