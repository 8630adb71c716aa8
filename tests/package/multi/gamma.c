int gamma_twice(int x)
{
    return x + x;
}
