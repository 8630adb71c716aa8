int beta_leaf(int x)
{
    return x + 1;
}
