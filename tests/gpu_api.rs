//! The GPU layer refuses misrecorded commands with an error that names them, submits
//! nothing, and stays usable afterwards. (Use after drop does not compile: see the
//! compile_fail doctests of `gpu::commands` and `gpu::DescriptorSet`.)

mod common;

use std::sync::{Arc, Mutex};

use common::{assert_validation_clean, validated_device};
use vkerode::gpu::{
    shaders, Buffer, BufferKind, CommandStream, ComputePipeline, DescriptorSet, GpuError, Hazard,
    MemoryScheme, PipelineDesc, SubmissionDone, TimestampQueries, DEDICATED_FROM_BYTES,
};
use vkerode::probes::atomic::FootprintProbe;

fn recording_error(result: Result<std::time::Duration, GpuError>) -> String {
    match result {
        Err(e @ GpuError::Recording { .. }) => e.to_string(),
        other => panic!("expected a recording error, got {other:?}"),
    }
}

#[test]
fn misrecorded_commands_are_errors_and_the_stream_stays_usable() {
    let ctx = validated_device();
    let apply = || {
        ComputePipeline::new(
            &ctx,
            &PipelineDesc::storage(shaders::APPLY_DELTA, &[], 2, 4),
        )
        .unwrap()
    };
    let (pipeline, other) = (apply(), apply());
    let heights = Buffer::new(&ctx, "heights", 64, BufferKind::Storage).unwrap();
    let delta = Buffer::new(&ctx, "delta", 64, BufferKind::Storage).unwrap();
    let set = DescriptorSet::new(&pipeline, &[&heights, &delta]).unwrap();
    let other_set = DescriptorSet::new(&other, &[&heights, &delta]).unwrap();
    let upload = Buffer::upload_from(&ctx, "upload", &[7i32; 16]).unwrap();
    let readback = Buffer::new(&ctx, "readback", 64, BufferKind::Download).unwrap();
    let cells = 16u32;
    let mut stream = CommandStream::new(&ctx).unwrap();

    let err = recording_error(stream.submit(|rec| rec.dispatch(1, 1, 1)));
    assert!(err.contains("no pipeline is bound"), "{err}");
    let err = recording_error(stream.submit(|rec| {
        rec.bind(&pipeline, &set);
        rec.dispatch(1, 1, 1);
    }));
    assert!(err.contains("push constants were not set"), "{err}");
    let err = recording_error(stream.submit(|rec| {
        rec.bind(&pipeline, &set);
        rec.push_constants(&[cells, cells]);
    }));
    assert!(err.contains("8 bytes do not match the 4"), "{err}");
    let err = recording_error(stream.submit(|rec| rec.bind(&pipeline, &other_set)));
    assert!(err.contains("made for another pipeline"), "{err}");
    let err = recording_error(stream.submit(|rec| rec.copy(&heights, &upload)));
    assert!(err.contains("cannot be copied into"), "{err}");
    let err = recording_error(stream.submit(|rec| rec.copy(&heights, &heights)));
    assert!(err.contains("onto itself"), "{err}");
    let err = recording_error(stream.submit(|rec| {
        rec.bind(&pipeline, &set);
        rec.push_constants(&cells);
        rec.dispatch(u32::MAX, 1, 1);
    }));
    assert!(err.contains("maxComputeWorkGroupCount"), "{err}");
    if let Some(queries) = TimestampQueries::new(&ctx, 2).unwrap() {
        let err = recording_error(stream.submit(|rec| rec.timestamp(&queries, 0)));
        assert!(err.contains("not reset"), "{err}");
        let err = recording_error(stream.submit(|rec| {
            rec.reset_queries(&queries);
            rec.timestamp(&queries, 2);
        }));
        assert!(err.contains("index 2 is past the pool's 2"), "{err}");
        assert!(queries.elapsed(0, 2).is_err());
    }

    // After all that, a well-recorded submission runs: heights 7 plus delta 7.
    stream
        .submit(|rec| {
            rec.barrier(Hazard::EarlierWorkToTransfer);
            rec.copy(&upload, &heights);
            rec.copy(&upload, &delta);
            rec.barrier(Hazard::TransferToCompute);
            rec.bind(&pipeline, &set);
            rec.push_constants(&cells);
            rec.dispatch(1, 1, 1);
            rec.barrier(Hazard::ComputeToTransfer);
            rec.copy(&heights, &readback);
            rec.barrier(Hazard::TransferToHost);
        })
        .unwrap();
    assert_eq!(readback.read::<i32>().unwrap(), vec![14; 16]);
    assert_validation_clean(&ctx);
}

#[test]
fn addressed_pipelines_take_their_buffers_only_through_bind_addressed() {
    let ctx = validated_device();
    // The streaming copy: two buffers by address, then two u32s.
    let copy = ComputePipeline::new(
        &ctx,
        &PipelineDesc::addressed(shaders::PEAK_COPY, &[], 2, 8),
    )
    .unwrap();
    let source = Buffer::new(&ctx, "source", 64, BufferKind::Addressed).unwrap();
    let target = Buffer::new(&ctx, "target", 64, BufferKind::Addressed).unwrap();
    let bound = Buffer::new(&ctx, "bound", 64, BufferKind::Storage).unwrap();
    let params = [4u32, 4];
    let mut stream = CommandStream::new(&ctx).unwrap();

    let err = recording_error(stream.submit(|rec| {
        rec.bind_addressed(&copy, &[&source, &target], &params);
        rec.push_constants(&[0u64, 0, 0]);
    }));
    assert!(err.contains("bind_addressed"), "{err}");
    let err = recording_error(stream.submit(|rec| {
        rec.bind_addressed(&copy, &[&source, &bound], &params);
    }));
    assert!(err.contains("\"bound\" is not reached by address"), "{err}");
    let err = recording_error(stream.submit(|rec| {
        rec.bind_addressed(&copy, &[&source], &params);
    }));
    assert!(err.contains("reaches 2 buffers by address, not 1"), "{err}");
    let err = recording_error(stream.submit(|rec| {
        rec.bind_addressed(&copy, &[&source, &target], &[4u32]);
    }));
    assert!(err.contains("do not match"), "{err}");

    // Used as it should be, the copy copies.
    let upload = Buffer::upload_from(&ctx, "upload", &(0..16).collect::<Vec<u32>>()).unwrap();
    let readback = Buffer::new(&ctx, "readback", 64, BufferKind::Download).unwrap();
    stream
        .submit(|rec| {
            rec.copy(&upload, &source);
            rec.barrier(Hazard::TransferToCompute);
            rec.bind_addressed(&copy, &[&source, &target], &params);
            rec.dispatch(1, 1, 1);
            rec.barrier(Hazard::ComputeToTransfer);
            rec.copy(&target, &readback);
            rec.barrier(Hazard::TransferToHost);
        })
        .unwrap();
    assert_eq!(
        readback.read::<u32>().unwrap(),
        (0..16).collect::<Vec<u32>>()
    );
    assert_validation_clean(&ctx);
}

/// A split recording tells its observer of each submission as it completes, with the
/// units of work counted into it while recording: what erode's progress bar adds up.
#[test]
fn an_observer_hears_each_submission_with_the_units_it_held() {
    let ctx = validated_device();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let told = Arc::clone(&heard);
    ctx.observe_submissions(Some(Arc::new(move |done: SubmissionDone| {
        told.lock().unwrap().push(done);
    })));
    let field = Buffer::new(&ctx, "field", 64, BufferKind::Storage).unwrap();
    let mut stream = CommandStream::new(&ctx).unwrap();
    stream
        .submit(|rec| {
            for (i, units) in [3u64, 0, 5].into_iter().enumerate() {
                if i > 0 {
                    rec.split_submission();
                }
                rec.barrier(Hazard::EarlierWorkToTransfer);
                rec.fill_zero(&field);
                rec.count_units(units);
                rec.count_units(units);
            }
        })
        .unwrap();
    // A recording of one submission that counts nothing is told too, with no units.
    stream
        .submit(|rec| {
            rec.barrier(Hazard::EarlierWorkToTransfer);
            rec.fill_zero(&field);
        })
        .unwrap();
    ctx.observe_submissions(None);
    stream.submit(|rec| rec.count_units(7)).unwrap();
    let done = |done, of, units| SubmissionDone { done, of, units };
    assert_eq!(
        *heard.lock().unwrap(),
        [done(1, 3, 6), done(2, 3, 0), done(3, 3, 10), done(1, 1, 0)]
    );
    assert_validation_clean(&ctx);
}

#[test]
fn a_device_local_buffer_from_the_dedicated_size_up_gets_a_memory_of_its_own() {
    // On NVIDIA's driver a large buffer in gpu-allocator's pooled scheme took random
    // atomics 143x slower at 16 GiB (docs/findings/allocation.md).
    let ctx = validated_device();
    let at = |bytes: u64, kind: BufferKind, scheme: MemoryScheme| {
        Buffer::allocated(&ctx, "scheme", bytes, kind, scheme)
            .unwrap()
            .dedicated()
    };
    let auto = MemoryScheme::Automatic;
    assert!(at(DEDICATED_FROM_BYTES, BufferKind::Addressed, auto));
    assert!(!at(
        DEDICATED_FROM_BYTES - 4096,
        BufferKind::Addressed,
        auto
    ));
    assert!(!at(1 << 20, BufferKind::Storage, auto));
    assert!(
        !at(DEDICATED_FROM_BYTES, BufferKind::Upload, auto),
        "host-visible staging stays pooled"
    );
    assert!(!at(
        DEDICATED_FROM_BYTES,
        BufferKind::Addressed,
        MemoryScheme::Pooled
    ));
    assert!(at(1 << 20, BufferKind::Storage, MemoryScheme::Dedicated));
    // A dedicated buffer works as any other: filled, copied and read back.
    let big = Buffer::new(&ctx, "big", DEDICATED_FROM_BYTES, BufferKind::Addressed).unwrap();
    let data: Vec<u32> = (0..1024).collect();
    vkerode::gpu::upload(&ctx, &data, &big).unwrap();
    assert_eq!(
        vkerode::gpu::download::<u32>(&ctx, &big, 1024).unwrap(),
        data
    );
    assert_validation_clean(&ctx);
}

#[test]
fn the_footprint_probe_adds_each_atomic_once_over_the_whole_map_and_times_both_schemes() {
    let ctx = validated_device();
    let probe = FootprintProbe::new(&ctx).unwrap();
    let (cells, invocations, adds) = (1u64 << 20, 1u32 << 14, 16u32);
    let counts = probe.counts(cells, invocations, adds).unwrap();
    let total: i64 = counts.iter().map(|&c| i64::from(c)).sum();
    assert_eq!(total, i64::from(invocations) * i64::from(adds));
    // 262,144 adds over 1M cells: every eighth of the map gets its share (a mask that
    // dropped the index's high bits would leave the upper half empty).
    for eighth in counts.chunks(counts.len() / 8) {
        let hits: i64 = eighth.iter().map(|&c| i64::from(c)).sum();
        assert!((28_000..37_000).contains(&hits), "{hits} adds in an eighth");
    }
    for scheme in [MemoryScheme::Pooled, MemoryScheme::Dedicated] {
        let (rate, dedicated) = probe.measure(cells, scheme, invocations, adds, 2).unwrap();
        assert_eq!(dedicated, scheme == MemoryScheme::Dedicated);
        assert!(rate.atomics_per_s.is_finite() && rate.atomics_per_s > 0.0);
    }
    assert_validation_clean(&ctx);
}

#[test]
fn the_pipeline_cache_is_saved_per_device_as_the_context_closes_and_a_damaged_file_is_replaced() {
    let dir = common::scratch("gpu_api", "pipeline-cache");
    let open = || {
        vkerode::gpu::Context::new(&vkerode::gpu::ContextOptions {
            validation: true,
            pipeline_cache: Some(dir.clone()),
            ..Default::default()
        })
        .unwrap()
    };
    let build = |ctx: &Arc<vkerode::gpu::Context>| {
        let desc = PipelineDesc::storage(shaders::PEAK_RANDOM, &[], 1, 16);
        ComputePipeline::new(ctx, &desc).unwrap();
        assert_validation_clean(ctx);
    };
    let saved = || -> Vec<u8> {
        let files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "one cache for one device: {files:?}");
        std::fs::read(&files[0]).unwrap()
    };
    let vendor = {
        let ctx = open();
        build(&ctx);
        ctx.info().vendor_id
    };
    // Saved as the context closed: a header naming this device (Vulkan's version one).
    let header = saved();
    let word =
        |bytes: &[u8], i: usize| u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap());
    assert_eq!(
        (word(&header, 0), word(&header, 1), word(&header, 2)),
        (32, 1, vendor)
    );
    // A damaged file does not stop the next context, and its close replaces the file.
    let damaged = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(&damaged, b"not a pipeline cache").unwrap();
    build(&open());
    assert_eq!(word(&saved(), 2), vendor);
}
