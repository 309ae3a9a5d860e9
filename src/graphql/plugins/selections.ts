import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  Kind,
  type SelectionSetNode,
} from 'graphql';

/** Walking an operation's fields through fragments, for the limits (limits.ts) and the cost (cost.ts). */

/** Fragment definitions by name. */
export type FragmentMap = Map<string, FragmentDefinitionNode>;

/** The fragment definitions of `document` by name. */
export function fragmentsOf(document: DocumentNode): FragmentMap {
  const map = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) map.set(definition.name.value, definition);
  }
  return map;
}

/** Called for each field met, with the type condition it is under and the fragments being expanded. */
export type Visit = (field: FieldNode, typeCondition: string | undefined, path: Set<string>) => void;

/**
 * Walks the fields of a selection set through fragments. `path` holds the fragments being expanded;
 * visitors pass it on when they descend, so a fragment cycle (reported by graphql's own rules) ends
 * instead of recursing forever.
 */
export function forEachField(
  selectionSet: SelectionSetNode,
  fragments: FragmentMap,
  visit: Visit,
  path: Set<string> = new Set(),
  typeCondition?: string,
): void {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) visit(selection, typeCondition, path);
    else if (selection.kind === Kind.INLINE_FRAGMENT) {
      forEachField(
        selection.selectionSet,
        fragments,
        visit,
        path,
        selection.typeCondition?.name.value ?? typeCondition,
      );
    } else {
      const name = selection.name.value;
      const fragment = fragments.get(name);
      if (!fragment || path.has(name)) continue;
      path.add(name);
      forEachField(fragment.selectionSet, fragments, visit, path, fragment.typeCondition.name.value);
      path.delete(name);
    }
  }
}
