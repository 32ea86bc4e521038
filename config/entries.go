package config

// NodeEntries returns, for every node of the cluster that f.Cluster built
// (in its order), the index of its nodes entry in f and the entry's name:
// the class of identical nodes it belongs to.
func (f *File) NodeEntries() (index []int, names []string) {
	for i, n := range f.Nodes {
		count := 1
		if n.Count != nil {
			count = *n.Count
		}
		for range count {
			index, names = append(index, i), append(names, n.Name)
		}
	}
	return index, names
}
