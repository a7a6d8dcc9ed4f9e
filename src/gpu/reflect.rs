//! A little SPIR-V reflection: the members of a module's push-constant block, so that
//! tests can tie each Rust push-constant struct to its GLSL block, offset for offset.

use super::pipeline::Spirv;

const OP_NAME_MEMBER: u32 = 6;
const OP_TYPE_POINTER: u32 = 32;
const OP_VARIABLE: u32 = 59;
const OP_MEMBER_DECORATE: u32 = 72;
const DECORATION_OFFSET: u32 = 35;
const STORAGE_PUSH_CONSTANT: u32 = 9;

/// (member name, byte offset) of the push-constant block, in member order; `None`
/// where the module has no block or is not SPIR-V. Names need a build with debug
/// names (every verbatim build has them).
pub fn push_constant_members(spirv: Spirv) -> Option<Vec<(String, u32)>> {
    let words: Vec<u32> = spirv
        .bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    if words.first() != Some(&0x0723_0203) {
        return None;
    }
    let mut instructions = Vec::new();
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        if count == 0 || at + count > words.len() {
            return None;
        }
        instructions.push((words[at] & 0xffff, &words[at + 1..at + count]));
        at += count;
    }
    let pointer = instructions.iter().find_map(|(op, args)| {
        (*op == OP_VARIABLE && args.get(2) == Some(&STORAGE_PUSH_CONSTANT)).then(|| args[0])
    })?;
    let block = instructions.iter().find_map(|(op, args)| {
        (*op == OP_TYPE_POINTER && args.first() == Some(&pointer)).then(|| args.get(2).copied())
    })??;
    let mut members: Vec<(u32, String, u32)> = Vec::new();
    for (op, args) in &instructions {
        match (*op, *args) {
            (OP_NAME_MEMBER, [ty, member, name @ ..]) if *ty == block => {
                members.push((*member, literal_string(name), u32::MAX));
            }
            (OP_MEMBER_DECORATE, [ty, member, DECORATION_OFFSET, offset]) if *ty == block => {
                match members.iter_mut().find(|(m, _, _)| m == member) {
                    Some(entry) => entry.2 = *offset,
                    None => members.push((*member, String::new(), *offset)),
                }
            }
            _ => {}
        }
    }
    members.sort_by_key(|(member, _, _)| *member);
    Some(
        members
            .into_iter()
            .map(|(_, name, offset)| (name, offset))
            .collect(),
    )
}

fn literal_string(words: &[u32]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}
