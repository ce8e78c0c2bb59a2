//! Builds a bounded [`SupervisionTree`] from the live table's rows.
//!
//! Breadth first, so that a bound keeps the top levels: the roots, then their
//! children, and so on, until `max_nodes` actors are listed. What does not fit is
//! counted (`collapsed`: an unlisted child and everything under it), so a system of
//! 100k actors gives a tree of at most `max_nodes` entries, not 100k.

use std::collections::{HashMap, VecDeque};

use super::live::{Row, SupervisionTree, TreeNode};
use crate::ActorId;

pub(crate) fn build(rows: Vec<Row>, max_nodes: usize) -> SupervisionTree {
    let actors = rows.len();
    let index: HashMap<ActorId, usize> = rows.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
    let mut kids: Vec<Vec<usize>> = vec![Vec::new(); rows.len()];
    let mut roots = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        // A child whose supervisor is gone from the table (stopping) shows as a root.
        match r.supervisor.and_then(|s| index.get(&s)) {
            Some(&p) => kids[p].push(i),
            None => roots.push(i),
        }
    }
    // Supervisors first (they carry the tree), then by id.
    let order = |v: &mut Vec<usize>, kids: &Vec<Vec<usize>>| {
        v.sort_by_key(|&i| (kids[i].is_empty(), rows[i].id));
    };
    for i in 0..kids.len() {
        let mut k = std::mem::take(&mut kids[i]);
        order(&mut k, &kids);
        kids[i] = k;
    }
    order(&mut roots, &kids);
    let sizes = subtree_sizes(&kids, &roots);

    // Breadth first: which actors are listed.
    let mut listed = vec![false; rows.len()];
    let mut budget = max_nodes;
    let mut queue: VecDeque<usize> = VecDeque::new();
    for &r in &roots {
        if budget == 0 {
            break;
        }
        budget -= 1;
        listed[r] = true;
        queue.push_back(r);
    }
    while let Some(i) = queue.pop_front() {
        for &c in &kids[i] {
            if budget == 0 {
                break;
            }
            budget -= 1;
            listed[c] = true;
            queue.push_back(c);
        }
    }

    let unlisted = |v: &[usize]| -> usize {
        v.iter()
            .filter(|&&c| !listed[c])
            .map(|&c| 1 + sizes[c])
            .sum()
    };
    let collapsed = unlisted(&roots);
    // Depth first to assemble; supervision trees are shallow (a level per
    // sub-supervisor), so an explicit stack is not needed.
    fn node(
        i: usize,
        rows: &[Row],
        kids: &[Vec<usize>],
        listed: &[bool],
        unlisted: &dyn Fn(&[usize]) -> usize,
    ) -> TreeNode {
        let r = &rows[i];
        TreeNode {
            id: r.id,
            actor: r.actor,
            name: r.name.clone(),
            status: r.status,
            restarts: r.restarts,
            children: kids[i]
                .iter()
                .filter(|&&c| listed[c])
                .map(|&c| node(c, rows, kids, listed, unlisted))
                .collect(),
            collapsed: unlisted(&kids[i]),
        }
    }
    SupervisionTree {
        roots: roots
            .iter()
            .filter(|&&r| listed[r])
            .map(|&r| node(r, &rows, &kids, &listed, &unlisted))
            .collect(),
        collapsed,
        actors,
    }
}

/// Descendants of each actor (not counting itself).
fn subtree_sizes(kids: &[Vec<usize>], roots: &[usize]) -> Vec<usize> {
    let mut sizes = vec![0; kids.len()];
    // Post-order without recursion: a node's size once all its children have theirs.
    let mut stack: Vec<(usize, bool)> = roots.iter().map(|&r| (r, false)).collect();
    while let Some((i, done)) = stack.pop() {
        if done {
            sizes[i] = kids[i].iter().map(|&c| 1 + sizes[c]).sum();
        } else {
            stack.push((i, true));
            stack.extend(kids[i].iter().map(|&c| (c, false)));
        }
    }
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::ActorStatus;

    fn row(id: u64, supervisor: Option<u64>) -> Row {
        Row {
            id: ActorId::from_u64(id),
            actor: "T",
            name: None,
            supervisor: supervisor.map(ActorId::from_u64),
            restarts: 0,
            status: ActorStatus::Running,
            depth: 0,
        }
    }

    #[test]
    fn a_bound_keeps_the_top_levels_and_counts_the_rest() {
        // 1 supervises 2 and 3; 2 supervises 4..=8; 9 and 10 are plain top-level actors.
        let mut rows = vec![row(1, None), row(2, Some(1)), row(3, Some(1))];
        rows.extend((4..=8).map(|i| row(i, Some(2))));
        rows.extend([row(9, None), row(10, None)]);
        let all = build(
            rows.iter()
                .map(|r| row(r.id.as_u64(), r.supervisor.map(|s| s.as_u64())))
                .collect(),
            100,
        );
        assert_eq!(all.actors, 10);
        assert_eq!(all.collapsed, 0);
        assert_eq!(all.roots.len(), 3);
        assert_eq!(all.roots[0].id, ActorId::from_u64(1), "supervisors first");
        assert_eq!(all.roots[0].children[0].children.len(), 5);

        // Room for 5: the three roots, then 1's two children; 2's five are collapsed.
        let small = build(rows, 5);
        assert_eq!(small.roots.len(), 3);
        assert_eq!(small.collapsed, 0);
        let two = &small.roots[0].children[0];
        assert_eq!(two.id, ActorId::from_u64(2));
        assert!(two.children.is_empty());
        assert_eq!(two.collapsed, 5);

        let tiny = build(
            (1..=10)
                .map(|i| row(i, (i > 1 && i < 4).then_some(1)))
                .collect(),
            1,
        );
        assert_eq!(tiny.roots.len(), 1);
        assert_eq!(tiny.roots[0].collapsed, 2);
        assert_eq!(tiny.collapsed, 7);
    }
}
